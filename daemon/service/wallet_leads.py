"""The daemon's side of leadership per wallet (`jupcron.service.shards`).

Each loop turn the daemon calls `turn(wallets)`; at most every ``interval``
seconds it reads the candidates (every daemon with a heartbeat row) and lets its
`ShardLeadership` take and hand over wallets. A change of the led set comes back
as a `Change` (the daemon then reloads its scheduler, recovers the runs of the
wallets it gained, and writes its heartbeat at once). `firing(wallet)` wraps each
fire, so a wallet is handed over only once none of its runs is under way here.

    leads = WalletLeads(PgShardLeadership(engine, node), engine)
    change = leads.turn(["main", "treasury"])      # None: nothing changed
    if leads.leads(plan.wallet):                   # the lease check before a fire
        with leads.firing(plan.wallet): runner.fire(plan, slot)
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from jupcron.errors import StoreBusyError
from jupcron.logs.outage import Outage
from jupcron.service.shards import ShardLeadership
from jupcron.store import control
from jupcron.store.engine import begin

log = structlog.get_logger(__name__)

TURN = 1.0  # seconds between two rebalance turns


@dataclass(frozen=True)
class Change:
    gained: frozenset[str]
    lost: frozenset[str]
    led: frozenset[str]


class WalletLeads:
    def __init__(
        self,
        leadership: ShardLeadership,
        engine: Engine,
        *,
        interval: float = TURN,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.leadership = leadership
        self.engine = engine
        self.interval = interval
        self._monotonic = monotonic
        self._last = float("-inf")
        self._led: frozenset[str] = frozenset()
        self._known: list[str] | None = None  # the candidates of the last read
        self._firing: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._outage = Outage(log, "wallet_leadership_failed")
        self._nodes_outage = Outage(log, "wallet_candidates_unreadable", "wallet_candidates_back")
        self.also_busy: Callable[[], bool] | None = None  # recovery driving runs, say

    @property
    def node(self) -> str:
        return self.leadership.node

    @property
    def led(self) -> frozenset[str]:
        return self._led

    def _candidates(self) -> list[str]:
        """Every daemon with a heartbeat row (the leadership keeps the live ones). If
        the pool cannot read them, the last ones read: the turn still runs on the
        leadership's own session, which the server ends once idle a while (a frozen
        daemon's wallets go), so a pool outage alone must not leave it idle."""
        try:
            self._known = self._read_nodes()
        except StoreBusyError as exc:
            if self._known is None:
                raise
            self._nodes_outage.failed(node=self.node, error=str(exc))
        else:
            self._nodes_outage.ok()
        return self._known

    def _read_nodes(self) -> list[str]:
        try:
            with begin(self.engine) as conn:
                return [n.node for n in control.nodes(conn)]
        except SQLAlchemyError as exc:
            raise StoreBusyError(f"wallet leadership: nodes unreadable: {exc}") from exc

    def turn(self, wallets: Sequence[str], *, now: bool = False) -> Change | None:
        """A rebalance turn if one is due (or ``now``); the change of the led set, if
        any. A store outage is logged once and leads nothing meanwhile: the
        leadership's connection (and every wallet with it) is gone then."""
        if not now and self._monotonic() - self._last < self.interval:
            return None
        self._last = self._monotonic()
        try:
            led = self.leadership.rebalance(wallets, self._candidates(), busy=self.busy)
        except StoreBusyError as exc:
            self._outage.failed(node=self.node, error=str(exc))
            led = self.leadership.led()
        else:
            self._outage.ok()
        old = self._led
        if led == old:
            return None
        self._led = led
        change = Change(gained=led - old, lost=old - led, led=led)
        log.info("wallets_led", node=self.node, wallets=sorted(led),
                 gained=sorted(change.gained), lost=sorted(change.lost))  # fmt: skip
        return change

    def leads(self, wallet: str) -> bool:
        """The lease check before a fire of a plan of ``wallet``."""
        return self.leadership.leads(wallet)

    @contextmanager
    def firing(self, wallet: str) -> Iterator[None]:
        """A fire of ``wallet`` under way: its hand-over waits for the end."""
        with self._lock:
            self._firing[wallet] += 1
        try:
            yield
        finally:
            with self._lock:
                self._firing[wallet] -= 1

    def busy(self, wallet: str) -> bool:
        with self._lock:
            if self._firing[wallet] > 0:
                return True
        return self.also_busy is not None and self.also_busy()

    def release(self) -> None:
        self.leadership.release()
        self._led = frozenset()
