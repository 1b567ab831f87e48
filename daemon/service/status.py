"""What the running daemon says of itself: the plans it counts, whether the store
answers, its last run and what is degraded, told to systemd (the ``STATUS=`` line),
to the heartbeat row (`jupcron status`, the page) and to the page (`live_state`).

A run listener (`run_finished`): the last run, for the ``STATUS=`` line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.app import Runtime
from jupcron.chain.wallets import addresses_text
from jupcron.config import Config
from jupcron.domain import RunStatus
from jupcron.errors import JupcronError
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.logs.outage import Outage
from jupcron.plans.apply import files_seen, files_vs_store
from jupcron.runner.core import node_name
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import AlertEvent
from jupcron.service.heartbeat import Heartbeat
from jupcron.service.notify import Notifier
from jupcron.store import plans as store_plans
from jupcron.store import runs
from jupcron.store.engine import reader_of, session_factory

log = structlog.get_logger(__name__)

FILES_EVERY = 5.0  # seconds between two reads of plans.dir for the page
# seconds the database may not answer before the operator is told (`store_down`; the
# config's `notify.store_down_after`): a blip is not said; a longer outage is, before the
# watchdog (WatchdogSec=60) restarts us
STORE_ALERT_AFTER = 30.0
STORE_LOG_EVERY = 60.0  # seconds between two `store_unavailable` lines of one outage

Alert = Callable[[AlertEvent, str], None]


class StoreOutage:
    """The database not answering: said once it lasted `after` seconds, and its return
    once (at the daemon's start while it waits for the database, and while it runs)."""

    def __init__(
        self,
        alert: Alert,
        *,
        after: float = STORE_ALERT_AFTER,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.alert = alert
        self.after = after
        self._monotonic = monotonic
        self._since: float | None = None  # when the outage began
        self._said = False

    def failed(self, error: str) -> None:
        now = self._monotonic()
        if self._since is None:
            self._since = now
        if not self._said and now - self._since >= self.after:
            self._said = True
            lasted = now - self._since
            self.alert(
                AlertEvent.STORE_DOWN,
                f"daemon on {node_name()} cannot reach the database for {lasted:.0f} s, "
                f"no runs meanwhile: {error}",
            )

    def ok(self) -> None:
        if self._said and self._since is not None:
            lasted = self._monotonic() - self._since
            text = f"daemon on {node_name()} reaches the database again after {lasted:.0f} s"
            self.alert(AlertEvent.STORE_DOWN, text)
        self._since, self._said = None, False


class PlanFilesCheck:
    """plans.dir against the store, for the page (`LiveState.plan_files_on`): at 100,000
    plans a comparison is seconds of reading every plan file, and the page polls.

    It runs on the session the page hands it, on the page's own read-only engine:
    never on the daemon's writer engine, whose connections the runner claims and
    records runs with (on SQLite each writer transaction holds the write lock, on
    PostgreSQL the pool is a few connections), so no number of tabs can hold up a due
    run's claim. At most one comparison runs at a time: a request that finds one under
    way gets the last answer, a little stale (``None`` before the first: "not compared
    yet"), instead of starting another. Otherwise the answer is read again at most
    every `FILES_EVERY` seconds, and the files are read again only when they or the
    store changed."""

    def __init__(
        self, config: Callable[[], Config], *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config  # the config in effect now (a reload replaces it)
        self._monotonic = monotonic
        self._lock = threading.Lock()  # held by the one comparison under way
        # (when read, plan files state, what it was read from: store revision and file stats)
        self._files: tuple[float, dict[str, Any], object] | None = None

    def __call__(self, session: Session) -> dict[str, Any] | None:
        files = self._files
        if files is not None and self._monotonic() - files[0] < FILES_EVERY:
            return files[1]
        if not self._lock.acquire(blocking=False):  # another request compares them now
            return files[1] if files is not None else None
        try:
            return self._read(session)
        finally:
            self._lock.release()

    def _read(self, session: Session) -> dict[str, Any]:
        now = self._monotonic()
        config = self.config()
        folder = config.plans.dir
        try:
            # read the files again only when they or the store changed: with
            # 100,000 plans a read is seconds of CPU
            seen = (store_plans.revision(session), files_seen(folder))
            if self._files is not None and self._files[2] == seen:
                self._files = (now, self._files[1], seen)
                return self._files[1]
            state = files_vs_store(session, folder, config.wallet_names()).as_json()
        except (JupcronError, SQLAlchemyError, OSError) as exc:
            state = {"folder": str(folder), "in_sync": False, "diff": [],
                     "problem": str(exc)}  # fmt: skip
            seen = None
        self._files = (now, state, seen)
        return state


class Status:
    def __init__(
        self,
        *,
        config: Callable[[], Config],
        metrics: Metrics,
        notifier: Notifier,
        degraded: Callable[[], list[str]],
        alert: Alert | None = None,
        store_down_after: float = STORE_ALERT_AFTER,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config  # the config in effect now (a reload replaces it)
        self.metrics = metrics
        self.notifier = notifier
        self.degraded = degraded  # what is degraded now (daemon/service/dependencies.py)
        self.runtime: Runtime | None = None  # set once built
        self.heartbeat: Heartbeat | None = None  # set once started
        self.store_ok = True
        self.outage = StoreOutage(alert or (lambda event, text: None), after=store_down_after,
                                  monotonic=monotonic)  # fmt: skip
        self._unavailable = Outage(log, "store_unavailable", "store_recovered",
                                   every=STORE_LOG_EVERY, monotonic=monotonic)  # fmt: skip
        self.plan_count = 0
        self._counted: int | None = None  # the plans revision `plan_count` was counted at
        self._text = ""  # the STATUS= line last sent
        self._last_run = ""
        self.plan_files = PlanFilesCheck(config, monotonic=monotonic)  # for the page
        self._reader: tuple[Engine, sessionmaker[Session]] | None = None  # (of runtime's)

    def run_finished(self, outcome: RunOutcome) -> None:
        """A run listener: the last run, for the STATUS line."""
        when = outcome.scheduled_for.strftime("%Y-%m-%d %H:%M:%SZ")
        self._last_run = f"{outcome.plan_name} {outcome.status} ({when})"

    def count_plans(self) -> None:
        """The store answers (a loop turn), and what it holds: the enabled plans are
        counted again only when the plans revision moved (every `apply` that changes
        a plan moves it), not every second: at 100,000 plans a count is a table scan.

        It only reads, so it reads beside the writers (`reading`): on the writer
        engine a SQLite transaction begins ``BEGIN IMMEDIATE``, so each loop turn
        took the write lock the runs' claims need, and waited up to the busy timeout
        (30 s) for any writer (an apply's write phase), then said the store was down
        and withheld the watchdog's ping while the store was merely busy."""
        try:
            with self.reading()() as session:
                revision = store_plans.revision(session)
                if revision != self._counted:
                    self.plan_count = store_plans.count_enabled(session)
                    self._counted = revision
                in_doubt = session.scalar(runs.count_status_stmt(RunStatus.IN_DOUBT)) or 0
            self.store_ok = True
        except (JupcronError, SQLAlchemyError) as exc:  # a dropped connection: a driver error
            self._unavailable.failed(error=str(exc))
            self.store_ok = False
            self.outage.failed(str(exc))
            return
        failing = self.heartbeat.failing if self.heartbeat is not None else None
        if failing is not None:
            # it reads but does not take writes (a full disk, a lock held for good): no
            # run can be recorded, so it is down as for a run (the health check, the
            # watchdog's ping, `store_down` after `notify.store_down_after`)
            self.store_ok = False
            self.outage.failed(f"writes fail: {failing}")
            return
        self._unavailable.ok()
        self.outage.ok()
        self.metrics.set_plans(self.plan_count)
        self.metrics.set_in_doubt(int(in_doubt))

    def reading(self) -> sessionmaker[Session]:
        """Sessions on an engine that reads the runtime's database beside its writers
        (`reader_of`: on a SQLite file a second engine, no write lock, no wait under
        WAL; PostgreSQL's own), made once for the runtime in use."""
        assert self.runtime is not None
        engine = self.runtime.store.engine
        if self._reader is None or self._reader[0] is not engine:
            self.close()
            self._reader = (engine, session_factory(reader_of(engine)))
        return self._reader[1]

    def close(self) -> None:
        """The reading engine let go (at the daemon's stop), if it is one of our own."""
        reader, self._reader = self._reader, None
        if reader is not None and reader[1].kw["bind"] is not reader[0]:
            reader[1].kw["bind"].dispose()

    def text(self, leader: bool) -> str:
        role = "leader" if leader else "standby"
        text = f"{role}, {self.plan_count} plans"
        degraded = self.degraded()
        if degraded:
            text += f", degraded ({'; '.join(degraded)})"
        return f"{text}, last run: {self._last_run}" if self._last_run else text

    def update(self, leader: bool) -> None:
        """A loop turn: the plans counted again; the STATUS= line sent when it changed."""
        self.count_plans()
        text = self.text(leader)
        if not self.store_ok:
            text += ", store unreachable"
        if text != self._text:
            self._text = text
            self.notifier.status(text)

    def beat(
        self, *, leader: bool, role_since: datetime, wallets: frozenset[str] | None = None
    ) -> None:
        """The heartbeat row `jupcron status` reads, with the config in effect now and
        the wallets this node leads."""
        if self.heartbeat is not None:
            degraded = "; ".join(self.degraded()) or None
            self.heartbeat.tick(leader=leader, role_since=role_since, config=self.config(),
                                degraded=degraded, wallets=wallets)  # fmt: skip

    def live_state(self) -> LiveState:
        """What only this process knows, for the status page (its role, dry run and
        kill switch the page reads from this daemon's heartbeat, as `jupcron status`)."""
        if self.runtime is None:
            return LiveState(node=node_name(), rate_limit=0.0, wallet="")
        runtime = self.runtime
        return LiveState(
            node=runtime.runner.node, rate_limit=runtime.api.pacer.rate,
            wallet=addresses_text(runtime.addresses()), plan_files_on=self.plan_files,
        )  # fmt: skip
