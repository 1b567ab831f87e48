"""How the scheduler's window (`jupcron.scheduling.window`) is fed, part of
`jupcron.scheduling.scheduler.Scheduler`: the plans due within the horizon read from
the store a page at a time in time order, the entries that waited out their jitter
let in again, and the next slots of plans that fired written back (a page finds a
plan by its stored ``next_fire``, so they are written before a page is read)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import structlog
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import JupcronError
from jupcron.scheduling import window as win
from jupcron.store import firing
from jupcron.store.engine import transaction
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)


class WindowFeed:
    """What feeding the window needs of the scheduler (it defines them)."""

    _reader: sessionmaker[Session]
    _runs: RunStore
    _lock: threading.RLock
    _window: win.Window
    _include: Callable[[PlanRecord], bool] | None
    _dirty: dict[int, win.Pending]
    _inflight: dict[int, int]
    _flushed: float

    if TYPE_CHECKING:  # the scheduler's own, for the type checker

        def _arm(self) -> None: ...

    def _refill(self, now: datetime) -> None:
        """Read the plans due within the horizon until the window is full: first the
        entries that waited out their jitter and are due now within it, then pages of
        the store (first writing the next slots of plans that fired: the pages find
        them), at most `PAGES_A_TURN` a turn (the next turn reads on)."""
        if not self._flush():
            return
        until = now + win.HORIZON
        self._readmit(until)
        for _ in range(win.PAGES_A_TURN):
            if not win.wants_refill(self._window.cursor, len(self._window.live), now):
                return
            limit = min(win.PAGE, win.CAPACITY - len(self._window.live))
            with transaction(self._reader) as session:
                page = firing.due_page(session, self._window.cursor, until, limit)
            self._window.read(page, limit, until, self._include, self._dirty)
            if len(page) < limit:
                return

    def _readmit(self, until: datetime) -> None:
        """The waiting entries due before `until` (as many as there is room for) live
        again, their plans' records read by id; waiting again if the store failed."""
        ripe = self._window.ripe(until, win.CAPACITY - len(self._window.live))
        for start in range(0, len(ripe), win.PAGE):
            chunk = ripe[start : start + win.PAGE]
            try:
                with transaction(self._reader) as session:
                    plans = firing.plans_by_id(session, [w.plan_id for w in chunk])
            except BaseException:
                for item in ripe[start:]:
                    self._window.wait(item)
                raise
            self._window.readmit(chunk, plans, self._include)

    def _flush(self) -> bool:
        """Write the next slots of plans that fired; False if the store refused."""
        self._flushed = time.monotonic()
        if not self._dirty:
            return True
        with self._lock:
            dirty = {k: v for k, v in self._dirty.items() if k not in self._inflight}
            for pid in dirty:
                del self._dirty[pid]
        if not dirty:
            return True
        try:
            self._runs.set_next(win.written(dirty))  # queued with the runs' writes
        except (JupcronError, SQLAlchemyError) as exc:
            self._dirty = {**dirty, **self._dirty}
            log.warning("next_fire_write_failed", plans=len(dirty), error=str(exc))
            return False
        with self._lock:
            if self._window.behind(dirty):  # held back past the cursor by a long fire
                self._arm()
        return True
