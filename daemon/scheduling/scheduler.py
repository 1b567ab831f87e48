"""APScheduler 3.11 wiring: fire each enabled plan at its slots, pick up changes.

Plans are rows, not jobs: each plan's next slot is stored with it
(``plans.next_fire``, `jupcron.store.firing`), and the scheduler keeps in memory
only the plans due within the next minute (`jupcron.scheduling.window`), read
from the store a page at a time in time order. One thread sleeps until the next
due slot (or the next page), then hands each due ``(plan, slot)`` to a pool of
`workers` threads; a fire first queues the plan's following slot (stored only once
the slot is claimed), then calls `fire`. Memory and work are flat in the plan
count; the unique (plan, slot) claim makes a double fire harmless. APScheduler
runs the plans watch and the retries after a store outage.

Misfires: a fire more than the plan's ``grace`` late, and every slot that passed
while the daemon was down (at start: ``next_fire`` past), is settled by `catch_up`
(``skip``: recorded ``skipped``; ``run-once``: the latest within grace runs).

Reload: `reload()` (SIGHUP, or a watch job seeing the store's plans revision change
every ``poll_interval`` seconds) adopts the plans `plans apply` added, settles the
changed and disabled ones (their old version's unfired slots recorded as skipped)
and reads the window again.

Shards: ``include`` (the wallets this daemon leads) filters the plans it fires;
`reload()` when the led set changes drops a plan handed over without a record (its
new leader fires from the stored ``next_fire``) and settles one gained as missed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import structlog
from apscheduler.executors.pool import ThreadPoolExecutor as ApsPool
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import NotLeadingError, StoreBusyError
from jupcron.scheduling import window as win
from jupcron.scheduling.catchup import catch_up
from jupcron.scheduling.feed import WindowFeed
from jupcron.scheduling.outage import UNAVAILABLE_CHANGED_ERROR as UNAVAILABLE_CHANGED_ERROR
from jupcron.scheduling.outage import UNAVAILABLE_ERROR as UNAVAILABLE_ERROR
from jupcron.scheduling.outage import Outages
from jupcron.scheduling.reload import Reloading, settle_after
from jupcron.scheduling.schedule import is_late, next_fire_times
from jupcron.store import firing, runs
from jupcron.store.engine import reader_of, session_factory, transaction
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore

log = structlog.get_logger(__name__)

MISSED_ERROR = "missed: daemon was down"
WATCH_JOB = "plans-watch"
STORE_RETRY = 5.0  # seconds until a fire that found the store unavailable is tried again


def utcnow() -> datetime:
    return datetime.now(UTC)


wall_now = utcnow  # APScheduler's own time base (see `Scheduler._aps_time`)


Fire = Callable[[PlanRecord, datetime], None]


class Scheduler(Reloading, Outages, WindowFeed):
    def __init__(
        self,
        factory: sessionmaker[Session],
        fire: Fire,
        *,
        poll_interval: float = 3.0,
        clock: Callable[[], datetime] = utcnow,
        workers: int = 8,
        on_misfire: Callable[[PlanRecord, list[datetime]], None] | None = None,
        store_retry: float = STORE_RETRY,
        runs: RunStore | None = None,
        include: Callable[[PlanRecord], bool] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """`include`: which plans this node fires (the wallets it leads; None: all).
        `monotonic`: the clock `healthy()` counts the store's last answer by."""
        self._factory = factory  # plans.next_fire: every run goes through `runs`
        # reads take no write lock (SQLite): the window is read while the runner writes
        self._reader = session_factory(reader_of(factory.kw["bind"]))
        self._runs = runs if runs is not None else SqlRunStore(factory.kw["bind"])
        self._store_retry = store_retry
        self._fire = fire
        self._on_misfire = on_misfire
        self._poll_interval = poll_interval
        self._clock = clock
        self._monotonic = monotonic
        self._include = include
        self._led: set[int] = set()  # with `include`: the plans it let through at the last reload
        self._aps = BackgroundScheduler(
            timezone=UTC, executors={"default": ApsPool(max_workers=2)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )  # fmt: skip
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fire")
        self._lock = threading.RLock()
        self._reloading = threading.Lock()  # one reload at a time, taken before `_lock`
        self._window = win.Window()
        self._dirty: dict[int, win.Pending] = {}  # next slots to write
        self._flushed = time.monotonic()
        self._wake = threading.Condition()  # taken after `_lock`, never before it
        self._armed = False  # the window changed since the timer read it
        self._loop: threading.Thread | None = None
        self._revision: int | None = None
        self._seen: int | None = None  # the highest plan id the last reload saw
        self._reload_due = False
        self._last_poll_ok = 0.0
        # fires handed to `fire` and not yet back: a stop waits for them, and starts no more
        self._calls = 0
        self._stopping = False
        self._inflight: dict[int, int] = {}  # plans whose handed-over slot may lack a row
        self._calls_lock = threading.Lock()

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Adopt new plans, settle changed ones and missed slots, then fire as they come.
        A store down at that moment does not stop the start: the watch job loads later."""
        self._aps.start(paused=True)
        loaded = self.refresh()
        self._aps.resume()
        self._last_poll_ok = self._monotonic()
        self._aps.add_job(self._poll, "interval", seconds=self._poll_interval, id=WATCH_JOB,
                          replace_existing=True)  # fmt: skip
        self._loop = threading.Thread(target=self._run, name="scheduler", daemon=True)
        self._loop.start()
        log.info("scheduler_started", plans=self._enabled() if loaded else None)

    def stop(self, wait: bool = True) -> None:
        """Stop firing: no fire starts from now on (a slot due meanwhile is settled at
        the next start, like any missed one); with `wait`, wait for those under way."""
        with self._calls_lock:
            self._stopping = True
        with self._wake:
            self._wake.notify_all()
        if self._loop is not None:
            self._loop.join(10)
        if self._aps.running:
            # paused and emptied before it is shut down: its loop removes a one-shot job
            # (a retry) once it has run it, and `shutdown` marks it stopped before it
            # takes the job stores' lock, so a loop half way through its pass looked for
            # the job among those not yet started and died (`JobLookupError`, a traceback
            # at the stop). Emptying the stores waits for that pass.
            self._aps.pause()
            self._aps.remove_all_jobs()
            self._aps.shutdown(wait=wait)
        self._pool.shutdown(wait=wait)
        with self._lock:
            self._flush()
        if self._reader.kw["bind"] is not self._factory.kw["bind"]:
            self._reader.kw["bind"].dispose()
        log.info("scheduler_stopped")

    def busy(self) -> int:
        """Fires under way: handed to `fire` (perhaps not yet claimed) and not back."""
        with self._calls_lock:
            return self._calls

    def healthy(self) -> bool:
        """Running, and the store answered recently: a revision poll, or a page a reload
        settled (the polls wait for a reload; one of 10,000 changed plans is seconds
        long, and one moving on is no stuck scheduler, while one settling nothing is)."""
        fresh = self._monotonic() - self._last_poll_ok < max(3 * self._poll_interval, 10.0)
        alive = self._loop is not None and self._loop.is_alive()
        return bool(self._aps.running) and fresh and alive

    def next_fires(self, limit: int | None = None) -> dict[str, datetime]:
        """Each scheduled plan's next slot (UTC), by name, soonest first."""
        with self._lock:
            self._flush()
            with transaction(self._reader) as session:
                found = firing.next_fires(session, limit, self._include)
            return win.next_fires(found, self._dirty.values(), self._window.live.values())

    def _aps_time(self, moment: datetime) -> datetime:
        """`moment` on our clock as APScheduler's run date (it waits by the wall clock,
        which an injected clock may run ahead of): the one place the wall clock is read."""
        return moment - (self._clock() - wall_now())

    # ------------------------------------------------------------ the window

    def _run(self) -> None:
        """The timer: sleep until something is due, hand it to the workers, repeat."""
        while True:
            with self._lock:  # then `_wake`: `_arm` is called with `_lock` held
                wait = self._sleep_for()
            with self._wake:
                if self._stopping:
                    return
                if wait > 0 and not self._armed:
                    self._wake.wait(wait)
                self._armed = False
                if self._stopping:
                    return
            try:
                self._turn()
            except Exception:
                log.exception("scheduler_turn_failed")
                time.sleep(win.MAX_SLEEP)

    def _sleep_for(self) -> float:
        flush_in = None
        if self._dirty:
            flush_in = win.FLUSH_EVERY - (time.monotonic() - self._flushed)
        live = len(self._window.live)
        return win.sleep_for(self._window.next_due(), self._window.cursor, live, self._clock(),
                             flush_in)  # fmt: skip

    def _turn(self) -> None:
        with self._lock:
            now = self._clock()
            if self._dirty and time.monotonic() - self._flushed >= win.FLUSH_EVERY:
                self._flush()
            if win.wants_refill(self._window.cursor, len(self._window.live), now):
                self._refill(now)
            due = self._window.pop_due(self._clock())
        for item in due:
            self._handed(item.plan.id)
            self._submit(self._due, item)

    def _arm(self) -> None:
        """Wake the timer: the window changed."""
        with self._wake:
            self._armed = True
            self._wake.notify_all()

    # ------------------------------------------------------------ firing

    def _settle(self, plan: PlanRecord, last: datetime | None) -> datetime | None:
        """Record missed slots, run the coalesced one, queue the next slot (the first
        not yet due: one waiting out its jitter is not missed); the slot handed out to
        run, if any.

        `last` is the plan's latest recorded slot as read a moment ago; if a fire
        claimed a slot since, the unique (plan, slot) key makes our claim a no-op.
        """
        now = self._clock()
        schedule = plan.schedule
        result = catch_up(schedule, last, since=plan.updated_at, now=now, key=plan.name)
        recorded: list[datetime] = []
        if result.skipped:
            recorded = self._runs.skip(plan, result.skipped, now=now, error=MISSED_ERROR)
        if recorded and self._on_misfire is not None:
            try:
                self._on_misfire(plan, recorded)
            except Exception:  # a broken notifier must not stop the schedule
                log.exception("misfire_listener_failed", plan=plan.name)
        if recorded:  # (slots that had a row already are not missed)
            log.warning("run_missed", plan=plan.name, skipped=len(recorded),
                        truncated=result.truncated, policy=str(schedule.misfire))  # fmt: skip
        # the next slot: the first one not yet due (its jitter), else the first after now
        after = now if result.waiting is None else result.waiting - timedelta(microseconds=1)
        self._queue_after(plan, after)
        if result.run is not None:
            log.info("run_caught_up", plan=plan.name, scheduled_for=result.run.isoformat())
            self._handed(plan.id)
            self._submit(self._fire_now, plan, plan.version, result.run.isoformat())
        return result.run

    def _submit(self, job: Callable[..., None], *args: object) -> None:
        """`job(*args)` on a worker; whatever it raises is logged, never lost in its future."""

        def work() -> None:
            try:
                job(*args)
            except Exception:  # a bug in the scheduler's own code: said, and the pool goes on
                log.exception("scheduler_job_failed", job=job.__name__)

        self._pool.submit(work)

    def _queue_after(self, plan: PlanRecord, after: datetime) -> None:
        """The plan's next slot after `after`: live if a page read past it already,
        else only written to the store (a later page reads it)."""
        upcoming = next_fire_times(plan.schedule, after, 1)
        if not upcoming:
            self._window.drop(plan.id)
            self._dirty[plan.id] = win.Pending(None, plan.version, plan.name)
            log.info("plan_finished", plan=plan.name)
            return
        slot = upcoming[0]
        self._dirty[plan.id] = win.Pending(slot, plan.version, plan.name)
        if self._window.covers(slot, plan.id):
            item = win.entry(plan, slot)
            if self._window.place(item) and self._window.next_due() == item.due:
                self._arm()
        else:
            self._window.drop(plan.id)

    def _handed(self, plan_id: int) -> None:
        with self._lock:
            self._inflight[plan_id] = self._inflight.get(plan_id, 0) + 1

    def _handed_back(self, plan_id: int) -> None:
        """A slot handed over is claimed, recorded or dropped: its plan's next slot
        may be written."""
        with self._lock:
            left = self._inflight.get(plan_id, 0) - 1
            if left > 0:
                self._inflight[plan_id] = left
            else:
                self._inflight.pop(plan_id, None)

    def _due(self, item: win.Entry) -> None:
        settled = True
        try:
            settled = self._due_now(item)
        except Exception as exc:  # noqa: BLE001 - the plan must go on firing, the slot be kept
            settled = self._due_failed(item, exc)
        finally:
            if settled:
                self._handed_back(item.plan.id)

    def _due_now(self, item: win.Entry) -> bool:
        """A slot is due: queue the plan's next slot, then fire (or settle if too late)."""
        plan, slot = item.plan, item.slot
        with self._lock:
            if self._window.live.get(plan.id) is not item:
                return True  # replaced by a reload (which recorded its slot)
            now = self._clock()
            if is_late(plan.schedule, plan.name, slot, now):
                log.warning("fire_late", plan=plan.name, scheduled_for=slot.isoformat())
                return self._late(plan, slot, now)
            self._queue_after(plan, slot)
        return self._call(plan, slot)

    def _late(self, plan: PlanRecord, slot: datetime, now: datetime) -> bool:
        """A fire too late: settle the plan's slots missed up to now (`_settle`: read its
        last recorded slot, record the missed ones, queue the next), from `slot` on when
        later ones have rows (`settle_after`: a stored next slot held back by a refused
        fire, read by the window at a start whose reload failed, was passed over). With
        the store unavailable: each missed slot retried (`_late_unavailable`), never dropped."""
        try:
            with transaction(self._reader) as session:
                last = runs.last_slot(session, plan.id)
            self._settle(plan, settle_after(last, slot))
        except (StoreBusyError, SQLAlchemyError) as exc:
            return self._late_unavailable(plan, slot, now, exc)
        return True

    def _fire_now(self, plan: PlanRecord, version: int, slot_text: str) -> None:
        settled = True
        try:
            with self._lock:
                live = self._window.live.get(plan.id)
            if live is not None and live.plan.version != version:
                return  # changed since: the reload settled it
            settled = self._call(plan, datetime.fromisoformat(slot_text))
        finally:
            if settled:
                self._handed_back(plan.id)

    def _call(self, plan: PlanRecord, slot: datetime) -> bool:
        """Fire `slot`; False when it may still have no row (a stop came first, or the
        store was unavailable and a retry is queued): its plan's next slot stays
        unwritten meanwhile."""
        with self._calls_lock:
            if self._stopping:
                log.info(
                    "fire_not_started_stopping", plan=plan.name, scheduled_for=slot.isoformat()
                )
                return False
            self._calls += 1
        log.info("fire_dispatched", plan=plan.name, scheduled_for=slot.isoformat())
        try:
            self._fire(plan, slot)
        except (StoreBusyError, NotLeadingError) as exc:
            # before the claim, or not ours to claim now: the slot may have no row yet
            self._store_unavailable(plan, slot, exc)
            return False
        except Exception as exc:  # noqa: BLE001 - the runner's bug must not stop the schedule
            log.error("fire_failed", plan=plan.name, scheduled_for=slot.isoformat(), error=str(exc))
        finally:
            with self._calls_lock:
                self._calls -= 1
        return True
