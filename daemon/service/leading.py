"""What this node leads: each led unit's lock tried, kept or lost, and its duties
started and stopped with it (DESIGN §6).

A unit is one thing a node may lead: its lock (daemon/service/leader.py) and the
duties that run while the lock is held (daemon/service/duties.py). On SQLite a
node leads one unit, everything, under one file lock. On PostgreSQL the daemon
leads a share of the wallets instead (daemon/service/wallet_leading.py: one lock
per wallet, rebalanced with the other daemons, one set of duties scoped to them).

    start ─► `try_all` (one try at each lock: SQLite says here who holds the file)
          ─► `take` what was got: became_leader, its duties start; else standby_waiting
    each loop turn ─► `keep`: a held lock checked (lost ─► stepping_down, duties stop),
                      a free one tried again; the held units' recovery when due
    stop ─► `shutdown` (duties stop, their runs still counted), then `release`
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from jupcron.errors import StoreBusyError
from jupcron.listen.metrics import Metrics
from jupcron.runner.core import node_name
from jupcron.service.alerts import AlertEvent
from jupcron.service.duties import LeaderDuties
from jupcron.service.leader import Leadership
from jupcron.service.runway import Alert

log = structlog.get_logger(__name__)


@dataclass
class Unit:
    """One thing this node may lead: its lock and the duties run while it is held."""

    name: str
    lock: Leadership
    duties: LeaderDuties
    held: bool = False


class Leading:
    def __init__(
        self, units: Sequence[Unit], *, metrics: Metrics, alert: Alert, since: datetime
    ) -> None:
        self.units = list(units)
        self.metrics = metrics
        self.alert = alert
        self.role_since = since  # when this node last became leader or stepped down
        self._tried = False  # `take` was called once (the first try, at start)

    @property
    def leader(self) -> bool:
        return any(unit.held for unit in self.units)

    def try_all(self) -> list[tuple[Unit, bool]]:
        """One try at each lock not held (SQLite: a `StoreError` if another daemon has it)."""
        return [(unit, self._acquire(unit)) for unit in self.units if not unit.held]

    def take(self, tries: Sequence[tuple[Unit, bool]]) -> None:
        """The units got are led from now on (their duties start); for the rest, wait.
        A lock got by the first try, at this daemon's start, was free: no other daemon
        drives its runs, so its recovery takes fresh ones too; one got later (a standby
        taking over) leaves them until stale (the old leader may still be finishing)."""
        at_start = not self._tried
        self._tried = True
        for unit, got in tries:
            if got:
                self._become_leader(unit, at_start=at_start)
            else:
                log.info("standby_waiting")

    def keep(self) -> None:
        """A loop turn: each held lock checked, each free one tried, recovery when due."""
        for unit in self.units:
            if unit.held:
                if not unit.lock.is_leader():
                    self._step_down(unit)
            else:
                self.take([(unit, self._acquire(unit))])
        for unit in self.units:
            if unit.held:
                unit.duties.maybe_recover()

    def healthy(self) -> bool:
        return all(unit.duties.healthy() for unit in self.units if unit.held)

    def busy(self) -> int:
        return sum(unit.duties.busy() for unit in self.units)

    def reload(self) -> None:
        for unit in self.units:
            unit.duties.reload()

    def shutdown(self) -> None:
        for unit in self.units:
            unit.duties.shutdown()

    def release(self) -> None:
        for unit in self.units:
            unit.lock.release()

    # ---- one unit -------------------------------------------------------------------

    def _acquire(self, unit: Unit) -> bool:
        try:
            return unit.lock.acquire(block=False)
        except StoreBusyError as exc:
            log.warning("leader_election_failed", error=str(exc))
            return False

    def _become_leader(self, unit: Unit, *, at_start: bool) -> None:
        unit.held = True
        self.role_since = datetime.now(UTC)
        self.metrics.set_leader(True)
        log.info("became_leader")
        self.alert(AlertEvent.LEADER_CHANGE, f"{node_name()} became the leader")
        unit.duties.start(startup=at_start)

    def _step_down(self, unit: Unit) -> None:
        log.warning("stepping_down")
        self.alert(AlertEvent.LEADER_CHANGE, f"{node_name()} stepped down (no longer leader)")
        unit.held = False
        self.role_since = datetime.now(UTC)
        self.metrics.set_leader(self.leader)
        unit.duties.step_down()


def one_unit(lock: Leadership, duties: Callable[[Leadership], LeaderDuties]) -> list[Unit]:
    """Today's units: everything, under the one lock of the database."""
    return [Unit("jupcron", lock, duties(lock))]
