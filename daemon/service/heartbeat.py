"""The daemon's heartbeat: its row in `daemon_nodes`, written every `BEAT` seconds
by leader and standby alike, so `jupcron status` (from any shell, on any machine
sharing the database) can tell who runs, in which role, and with what in effect.

Each beat reads the config the daemon runs with *now* (a reload may have changed
`safety.dry_run` or the kill switch); a change of role, dry run or kill switch is
written at once (the status page and `jupcron status` show it within a loop turn
of a config reload, not a beat later). A clean
stop removes the row; a crashed daemon's row stops being renewed and shows as not
running once older than `STALE_AFTER`.

Its ``version`` is the software's and the tz data release the daemon reads zones
from (`jupcron.scheduling.zones.with_tzdata`): nodes that read one zone otherwise
work out other slots for one plan, which `jupcron status` and the page point out.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime

import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from jupcron.config import Config
from jupcron.errors import JupcronError, StoreError
from jupcron.logs.outage import Outage
from jupcron.runner.killswitch import kill_switch
from jupcron.scheduling.zones import with_tzdata
from jupcron.store import control
from jupcron.store.control import BEAT, NodeBeat
from jupcron.store.engine import begin

log = structlog.get_logger(__name__)


class Heartbeat:
    def __init__(
        self,
        engine: Engine,
        *,
        node: str,
        started_at: datetime,
        version: str,
        interval: float = BEAT,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.node = node
        self.started_at = started_at
        self.version = with_tzdata(version)
        self.interval = interval
        self._monotonic = monotonic
        self._last = float("-inf")
        # the last written: role, dry run, kill switch, degraded, led wallets
        self._state: tuple[str, bool, str | None, str | None, tuple[str, ...] | None] | None = None
        self._outage = Outage(log, "heartbeat_failed")
        self._written = False
        # why the last beat could not be written, unless another writer held the lock
        # (merely busy): a store that reads but takes no write (a full disk, a
        # read-only file) is down for the daemon's health (`Status.count_plans`)
        self.failing: str | None = None

    def tick(
        self,
        *,
        leader: bool,
        role_since: datetime,
        config: Config,
        degraded: str | None = None,
        wallets: frozenset[str] | None = None,
    ) -> None:
        """Beat if one is due (or the role, dry run, kill switch, degraded state or
        the led wallets changed); a store outage is logged, not raised (a `StoreError`,
        the database file deleted or replaced, is: the daemon stops)."""
        role = "leader" if leader else "standby"
        led = None if wallets is None else tuple(sorted(wallets))
        state = (role, config.safety.dry_run, kill_switch(config), degraded, led)
        if state == self._state and self._monotonic() - self._last < self.interval:
            return
        self._last = self._monotonic()
        beat = NodeBeat(
            node=self.node, role=role, role_since=role_since, started_at=self.started_at,
            last_beat=datetime.now(UTC), dry_run=state[1], kill_switch=state[2],
            version=self.version, degraded=degraded, wallets=led,
        )  # fmt: skip
        try:
            with begin(self.engine) as conn:
                control.beat(conn, beat)
        except StoreError:
            # not an outage: the database file is gone or another one (deleted, restored
            # under us: `jupcron.store.engine.SameFile`); the daemon stops now, not at
            # the next run or recovery pass, which may be an hour off
            raise
        except (JupcronError, SQLAlchemyError) as exc:
            self._outage.failed(error=str(exc))
            self.failing = None if _locked(exc) else str(exc)
            return
        self._outage.ok()
        self._state, self._written, self.failing = state, True, None

    def stop(self) -> None:
        """A clean stop: the row goes (if the store can be reached; else it goes stale)."""
        if not self._written:
            return
        try:
            with begin(self.engine) as conn:
                control.forget_node(conn, self.node)
        except (JupcronError, SQLAlchemyError) as exc:
            log.warning("heartbeat_not_removed", error=str(exc))


_SQLITE_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _locked(exc: BaseException) -> bool:
    """Whether SQLite said another connection holds the lock (its primary code), as the
    error or one it was raised from: busy, not failing."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return False
        code = getattr(seen, "sqlite_errorcode", None)
        if isinstance(code, int):
            return code & 0xFF in _SQLITE_BUSY
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False
