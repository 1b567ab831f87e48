"""APScheduler 3.11 wiring: fire each enabled plan at its slots, pick up changes.

Plans are data: the jobs live in APScheduler's MemoryJobStore and are rebuilt
from the store at start and on every reload; nothing is pickled. Fire times
come from our own schedule maths (`jupcron.scheduling.schedule`), not APScheduler's
triggers: each plan has one pending one-shot job for its next slot (job id
``plan-<id>-v<version>-<slot>``, args are plain values); when it runs it first
queues the following slot, then hands ``(plan, scheduled_for)`` to `fire`.
The runner's unique (plan, slot) claim makes a double fire harmless.

Misfires: APScheduler's own misfire handling is off (``misfire_grace_time=None``,
``coalesce=True``, ``max_instances=1``); a job that starts more than the plan's
``grace`` late, and every slot that passed while the daemon was down, is
settled by `jupcron.scheduling.schedule.catch_up` (``skip``: recorded as ``skipped``;
``run-once``: the latest within grace runs, the rest are ``skipped``).

Reload: `reload()` (the SIGHUP path) re-reads the enabled plans; a watch job
polls the store's plans revision every ``poll_interval`` seconds and reloads
when it changed (so `plans apply` from anywhere takes effect).

Shards: ``include`` (the wallets this daemon leads, on PostgreSQL) filters the
plans at every load; the daemon calls `reload()` when its led set changes. A plan
filtered out is dropped without recording anything: its new leader fires its slots.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import structlog
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import JupcronError, StoreBusyError
from jupcron.scheduling.schedule import (
    Schedule,
    catch_up,
    is_late,
    jitter_delay,
    next_fire_times,
)
from jupcron.scheduling.slots import pending_of_previous, record_unfired
from jupcron.store import plans as store_plans
from jupcron.store import runs
from jupcron.store.engine import transaction
from jupcron.store.plans import PlanDiff
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore

log = structlog.get_logger(__name__)

MISSED_ERROR = "missed: daemon was down"
UNAVAILABLE_ERROR = "missed: the store was unavailable until the slot's grace period had passed"
UNAVAILABLE_CHANGED_ERROR = "missed: the store was unavailable, and the plan changed since"
WATCH_JOB = "plans-watch"
STORE_RETRY = 5.0  # seconds until a fire that found the store unavailable is tried again


def utcnow() -> datetime:
    return datetime.now(UTC)


wall_now = utcnow  # APScheduler's own time base (see `Scheduler._aps_time`)


Fire = Callable[[PlanRecord, datetime], None]


class Scheduler:
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
    ) -> None:
        self._include = include
        self._factory = factory  # reads only: every run it records goes through `runs`
        self._runs = runs if runs is not None else SqlRunStore(factory.kw["bind"])
        self._store_retry = store_retry
        self._fire = fire
        self._on_misfire = on_misfire
        self._poll_interval = poll_interval
        self._clock = clock
        self._aps = BackgroundScheduler(
            timezone=UTC,
            executors={"default": ThreadPoolExecutor(max_workers=workers)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )
        self._lock = threading.RLock()
        self._plans: dict[int, PlanRecord] = {}
        self._schedules: dict[int, Schedule] = {}
        self._next: dict[int, datetime] = {}
        self._revision: int | None = None
        self._last_poll_ok = 0.0
        # fires handed to `fire` and not yet back: a stop waits for them, and starts no more
        self._calls = 0
        self._stopping = False
        self._calls_lock = threading.Lock()

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Load the enabled plans, settle missed slots, schedule the next ones."""
        # paused while thousands of jobs are added: no wake-up of the scheduler thread per job
        self._aps.start(paused=True)
        self.reload()
        self._aps.resume()
        self._last_poll_ok = time.monotonic()
        self._aps.add_job(
            self._poll,
            "interval",
            seconds=self._poll_interval,
            id=WATCH_JOB,
            replace_existing=True,
        )
        log.info("scheduler_started", plans=len(self._plans))

    def stop(self, wait: bool = True) -> None:
        """Stop firing: no fire starts from now on (a slot due meanwhile is settled at
        the next start, like any missed one); with `wait`, wait for those under way."""
        with self._calls_lock:
            self._stopping = True
        if self._aps.running:
            self._aps.shutdown(wait=wait)
        log.info("scheduler_stopped")

    def busy(self) -> int:
        """Fires under way: handed to `fire` (perhaps not yet claimed) and not back."""
        with self._calls_lock:
            return self._calls

    def healthy(self) -> bool:
        """Running, and the store answered the last revision poll recently."""
        fresh = time.monotonic() - self._last_poll_ok < max(3 * self._poll_interval, 10.0)
        return bool(self._aps.running) and fresh

    def next_fires(self) -> dict[str, datetime]:
        """Each scheduled plan's next slot (UTC), by name."""
        with self._lock:
            return {self._plans[pid].name: slot for pid, slot in sorted(self._next.items())}

    @property
    def revision(self) -> int | None:
        return self._revision

    def _aps_time(self, moment: datetime) -> datetime:
        """`moment` on our clock as APScheduler's run date: APScheduler waits by the
        wall clock, which an injected clock (a test's) may run ahead of or behind.
        Every decision here uses `self._clock`; this is the one place the wall clock
        is read, to translate."""
        return moment - (self._clock() - wall_now())

    # ------------------------------------------------------------ reload

    def reload(self) -> PlanDiff | None:
        """Re-read the enabled plans; returns what changed (None: nothing). The first
        load (at start) is no change: `scheduler_started` reports its plan count."""
        with self._lock:
            first = self._revision is None
            with transaction(self._factory) as session:
                rev = store_plans.revision(session)
                fresh = {p.id: p for p in store_plans.enabled_plans(session)}
                if self._include is not None:  # another daemon leads the others
                    led = {pid: p for pid, p in fresh.items() if self._include(p)}
                    handed = {pid for pid in self._plans if pid in fresh and pid not in led}
                    fresh = led
                else:
                    handed = set()
                lasts = runs.last_slots(session)  # one query, not one per plan
                # plans that left the enabled set: as they are now (disabled, with its time)
                gone = {
                    pid: store_plans.plan_by_id(session, pid)
                    for pid in self._plans
                    if pid not in fresh and pid not in handed
                }
            added: list[str] = []
            changed: list[str] = []
            disabled: list[str] = []
            for pid in handed:
                self._drop(pid)
            for pid, known in list(self._plans.items()):
                if pid not in fresh:
                    disabled.append(known.name)
                    pending, schedule = self._next.get(pid), self._schedules.get(pid)
                    now_off = gone.get(pid)
                    if pending is not None and schedule is not None and now_off is not None:
                        # slots due before the disable whose fire waited behind busy workers
                        self._record_unfired(now_off, schedule, pending)
                    self._drop(pid)
            for pid, plan in fresh.items():
                old = self._plans.get(pid)
                if old is not None and old.version == plan.version:
                    continue
                (added if old is None else changed).append(plan.name)
                pending, old_schedule = self._next.get(pid), self._schedules.get(pid)
                if old is None and plan.version > 1:  # changed while no scheduler ran it
                    pending, old_schedule = pending_of_previous(self._factory, plan)
                if pending is not None and old_schedule is not None:
                    self._record_unfired(plan, old_schedule, pending)
                self._drop(pid)
                self._activate(plan, lasts.get(pid))
            self._revision = rev
        if not (added or changed or disabled):
            return None
        diff = PlanDiff(tuple(sorted(added)), tuple(sorted(changed)), tuple(sorted(disabled)))
        if first:
            return diff
        log.info(
            "plans_reloaded",
            revision=rev,
            added=len(added),
            changed=len(changed),
            disabled=len(disabled),
        )
        return diff

    def _poll(self) -> None:
        try:
            with transaction(self._factory) as session:
                rev = store_plans.revision(session)
        except (JupcronError, SQLAlchemyError) as exc:  # store down: stay alive, report unhealthy
            log.warning("plans_poll_failed", error=str(exc))
            return
        self._last_poll_ok = time.monotonic()
        if rev != self._revision:
            try:
                self.reload()
            except (JupcronError, SQLAlchemyError) as exc:
                log.error("plans_reload_failed", error=str(exc))

    def _drop(self, pid: int) -> None:
        known = self._plans.pop(pid, None) is not None
        self._schedules.pop(pid, None)
        self._next.pop(pid, None)
        if not known:
            return  # jobs are only queued for known plans: no scan of every job (O(n²) at start)
        prefix = f"plan-{pid}-"
        for job in self._aps.get_jobs():
            if job.id.startswith(prefix):
                job.remove()

    def _activate(self, plan: PlanRecord, last: datetime | None) -> None:
        schedule = plan.schedule
        self._plans[plan.id] = plan
        self._schedules[plan.id] = schedule
        self._settle(plan, schedule, last)

    # ------------------------------------------------------------ firing

    def _settle(self, plan: PlanRecord, schedule: Schedule, last: datetime | None) -> None:
        """Record missed slots, run the coalesced one, queue the next slot after now.

        `last` is the plan's latest recorded slot as read a moment ago; if a fire
        claimed a slot since, the unique (plan, slot) key makes our claim a no-op.
        """
        now = self._clock()
        result = catch_up(schedule, last, since=plan.updated_at, now=now)
        recorded: list[datetime] = []
        if result.skipped:
            recorded = self._runs.skip(plan, result.skipped, now=now, error=MISSED_ERROR)
        if recorded and self._on_misfire is not None:
            try:
                self._on_misfire(plan, recorded)
            except Exception:  # a broken notifier must not stop the schedule
                log.exception("misfire_listener_failed", plan=plan.name)
        if result.skipped:
            log.warning(
                "run_missed",
                plan=plan.name,
                skipped=len(result.skipped),
                truncated=result.truncated,
                policy=str(schedule.misfire),
            )
        self._queue_after(plan, schedule, now)
        if result.run is not None:
            log.info("run_caught_up", plan=plan.name, scheduled_for=result.run.isoformat())
            self._aps.add_job(
                self._fire_now,
                "date",
                run_date=self._aps_time(now),
                args=[plan.id, plan.version, result.run.isoformat()],
                id=f"plan-{plan.id}-v{plan.version}-catchup-{result.run.isoformat()}",
                replace_existing=True,
            )

    def _queue_after(self, plan: PlanRecord, schedule: Schedule, after: datetime) -> None:
        upcoming = next_fire_times(schedule, after, 1)
        if not upcoming:
            self._next.pop(plan.id, None)
            log.info("plan_finished", plan=plan.name)
            return
        slot = upcoming[0]
        due = slot + jitter_delay(schedule, plan.name, slot)
        self._next[plan.id] = slot
        self._aps.add_job(
            self._due,
            "date",
            run_date=self._aps_time(due),
            args=[plan.id, plan.version, slot.isoformat()],
            id=f"plan-{plan.id}-v{plan.version}-{slot.isoformat()}",
            replace_existing=True,
        )

    def _due(self, plan_id: int, version: int, slot_text: str) -> None:
        """A slot's job ran: queue the next slot, then fire (or settle if too late)."""
        slot = datetime.fromisoformat(slot_text)
        with self._lock:
            plan = self._plans.get(plan_id)
            schedule = self._schedules.get(plan_id)
            if plan is None or schedule is None or plan.version != version:
                return  # a job of a plan version that is gone (reload recorded its slot)
            now = self._clock()
            if is_late(schedule, plan.name, slot, now):
                log.warning("fire_late", plan=plan.name, scheduled_for=slot_text)
                with self._factory() as session:
                    last = runs.last_slot(session, plan.id)
                self._settle(plan, schedule, last)
                return
            self._queue_after(plan, schedule, slot)
        self._call(plan, slot)

    def _record_unfired(self, plan: PlanRecord, schedule: Schedule, first: datetime) -> None:
        skipped = record_unfired(self._runs, plan, schedule, first, now=self._clock())
        if skipped:
            log.warning("run_missed", plan=plan.name, skipped=skipped, reason="plan_changed")

    def _fire_now(self, plan_id: int, version: int, slot_text: str) -> None:
        with self._lock:
            plan = self._plans.get(plan_id)
        if plan is None or plan.version != version:
            return
        self._call(plan, datetime.fromisoformat(slot_text))

    def _call(self, plan: PlanRecord, slot: datetime) -> None:
        with self._calls_lock:
            if self._stopping:
                log.info(
                    "fire_not_started_stopping", plan=plan.name, scheduled_for=slot.isoformat()
                )
                return
            self._calls += 1
        log.info("fire_dispatched", plan=plan.name, scheduled_for=slot.isoformat())
        try:
            self._fire(plan, slot)
        except StoreBusyError as exc:
            # maybe before the claim: the slot may have no row yet, so it must not be dropped
            self._store_unavailable(plan, slot, exc)
        except Exception as exc:  # noqa: BLE001 - the runner's bug must not stop the schedule
            log.error("fire_failed", plan=plan.name, scheduled_for=slot.isoformat(), error=str(exc))
        finally:
            with self._calls_lock:
                self._calls -= 1

    # ------------------------------------------------------------ store outages

    def _store_unavailable(self, plan: PlanRecord, slot: datetime, exc: Exception) -> None:
        log.error(
            "fire_store_unavailable", plan=plan.name, scheduled_for=slot.isoformat(),
            error=str(exc), retry_in=self._store_retry,
        )  # fmt: skip
        self._aps.add_job(
            self._retry,
            "date",
            run_date=self._aps_time(self._clock() + timedelta(seconds=self._store_retry)),
            args=[plan, slot.isoformat()],
            id=f"plan-{plan.id}-v{plan.version}-retry-{slot.isoformat()}",
            replace_existing=True,
        )

    def _retry(self, plan: PlanRecord, slot_text: str) -> None:
        """Fire a slot again after the store was unavailable; once its grace has passed
        (or its plan changed), record it as skipped instead. Retried until one of the
        two reaches the store: the slot's unique key makes a repeat harmless."""
        slot = datetime.fromisoformat(slot_text)
        with self._lock:
            current = self._plans.get(plan.id)
            schedule = self._schedules.get(plan.id)
        if current is None or schedule is None or current.version != plan.version:
            self._skip_unfired(plan, slot, UNAVAILABLE_CHANGED_ERROR)
        elif is_late(schedule, plan.name, slot, self._clock()):
            if self._skip_unfired(plan, slot, UNAVAILABLE_ERROR) and self._on_misfire is not None:
                self._on_misfire(plan, [slot])
        else:
            self._call(plan, slot)

    def _skip_unfired(self, plan: PlanRecord, slot: datetime, error: str) -> bool:
        """Record the slot as skipped; whether this call recorded it."""
        try:
            taken = self._runs.skip(plan, [slot], now=self._clock(), error=error)
        except StoreBusyError as exc:
            self._store_unavailable(plan, slot, exc)
            return False
        if taken:
            log.warning("run_missed", plan=plan.name, scheduled_for=slot.isoformat(), reason=error)
        return bool(taken)


# APScheduler checks a job's callable against its args with `inspect.signature` on
# every add_job: 40% of start-up with 10,000 plans. inspect honours a precomputed
# `__signature__`, so the check stays (and stays right) but costs no re-derivation.
for _method in (Scheduler._due, Scheduler._fire_now, Scheduler._retry):
    _method.__signature__ = inspect.signature(_method)  # type: ignore[union-attr]
