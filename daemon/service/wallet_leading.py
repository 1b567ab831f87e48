"""What this node leads on PostgreSQL: a share of the wallets (DESIGN §6).

The same face as `jupcron.service.leading.Leading` (the daemon calls `try_all`,
`take`, `keep`, …), for leadership per wallet: `WalletLeads` takes and hands over
wallets each loop turn (daemon/service/wallet_leads.py), and one `LeaderDuties`
runs the plans of the led wallets (its scheduler filtered by them, recovery too,
each fire checking its own wallet's lock).

    first wallet led ─► became_leader: recovery, the scheduler (led wallets only)
    led set changes  ─► wallets_led; the scheduler reloads; recovery for the gained
                        (their runs untouched for a while: another daemon may be
                        driving the fresh ones; they are looked at again once stale)
    last wallet gone ─► stepping_down: the duties stop; standby_waiting
    the first configured wallet led ─► the follower and the runway watch run here

SQLite keeps `Leading` (one file lock, every wallet).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import structlog

from jupcron.runner.core import node_name
from jupcron.service.alerts import AlertEvent
from jupcron.service.duties import LeaderDuties
from jupcron.service.runway import Alert
from jupcron.service.wallet_leads import Change, WalletLeads
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)


class WalletScope:
    """The duties' view of the led wallets (`jupcron.service.duties.Scope`)."""

    def __init__(self, leads: WalletLeads) -> None:
        self.leads_ = leads

    def includes(self, plan: PlanRecord) -> bool:
        return self.owns(plan.wallet)

    def owns(self, wallet: str) -> bool:
        return wallet in self.leads_.led

    def leads(self, plan: PlanRecord) -> bool:
        return self.leads_.leads(plan.wallet)

    @contextmanager
    def firing(self, plan: PlanRecord) -> Iterator[None]:
        with self.leads_.firing(plan.wallet):
            yield


class WalletLeading:
    def __init__(
        self,
        leads: WalletLeads,
        duties: Callable[[WalletScope], LeaderDuties],
        *,
        wallets: Callable[[], Sequence[str]],
        set_leader: Callable[[bool], None],
        alert: Alert,
        since: datetime,
    ) -> None:
        self.leads = leads
        self.scope = WalletScope(leads)
        self.duties = duties(self.scope)
        self.wallets = wallets  # the configured wallets' names, first the one that follows
        self.set_leader = set_leader
        self.alert = alert
        self.role_since = since
        self._said_standby = False
        leads.also_busy = self.duties.recovering  # a wallet waits for recovery's runs too

    @property
    def leader(self) -> bool:
        return bool(self.leads.led)

    @property
    def led(self) -> frozenset[str]:
        return self.leads.led

    def _primary(self) -> str | None:
        names = self.wallets()
        return names[0] if names else None

    def try_all(self) -> list[Change | None]:
        """At start: join (connect, take part) but take no wallet yet: one taken now
        would wait unled until `take`, with no heartbeat row yet to say who has it."""
        return [self.leads.turn((), now=True)]

    def take(self, tries: Sequence[Change | None]) -> None:
        """The first real turn, right before the first heartbeat."""
        for change in tries:
            self._apply(change)
        self._apply(self.leads.turn(self.wallets(), now=True))

    def keep(self) -> None:
        """A loop turn: a rebalance when due, its change applied; recovery when due."""
        self._apply(self.leads.turn(self.wallets()))
        if self.leader:
            self.duties.maybe_recover()

    def _apply(self, change: Change | None) -> None:
        if change is None:
            if not self.leader and not self._said_standby:
                self._said_standby = True
                log.info("standby_waiting")
            return
        was = bool(change.led - change.gained) or bool(change.lost)
        now = bool(change.led)
        primary = self._primary()
        beside = primary is not None and primary in change.led
        if now and not was:
            self.role_since = datetime.now(UTC)
            self.set_leader(True)
            led = ", ".join(sorted(change.led))
            log.info("became_leader", wallets=sorted(change.led))
            self.alert(AlertEvent.LEADER_CHANGE, f"{node_name()} became the leader of {led}")
            # not `startup`: another daemon may have led these wallets a moment ago
            self.duties.start(beside=beside, startup=False)
        elif was and not now:
            log.warning("stepping_down", wallets=sorted(change.lost))
            self.alert(AlertEvent.LEADER_CHANGE,
                       f"{node_name()} stepped down (no longer leads a wallet)")  # fmt: skip
            self.role_since = datetime.now(UTC)
            self.set_leader(False)
            self.duties.step_down()
            self._said_standby = False
        else:
            self.duties.reload()  # the scheduler takes the gained wallets, drops the lost
            if change.gained:
                # their old leader may still be driving runs (its lease lost with its
                # connection): only the stale ones now, the rest once they go stale
                self.duties.recover_gained()
            self.duties.beside(beside)

    def healthy(self) -> bool:
        return self.duties.healthy() if self.leader else True

    def busy(self) -> int:
        return self.duties.busy()

    def reload(self) -> None:
        self.duties.reload()

    def shutdown(self) -> None:
        self.duties.shutdown()

    def release(self) -> None:
        self.leads.release()
