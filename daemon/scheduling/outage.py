"""A fire that found the store unavailable, or found that this daemon no longer
leads the plan's wallet (a lease lost with its connection; part of
`jupcron.scheduling.scheduler.Scheduler`): not dropped, and its plan's next slot
not written past it, but tried again every `store_retry` seconds (an APScheduler
date job) until it fires (its claim a no-op if the wallet's new leader ran it),
or is recorded as skipped once its grace has passed or its plan changed.

The same holds wherever a fire's path meets the store: a late fire that cannot
read or record its missed slots has each of them retried so (their grace has
passed: recorded skipped once the store answers) and its plan's next slot queued;
a fire whose path failed for any other reason is logged and retried the same way."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import structlog
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import JupcronError, NotLeadingError, StoreBusyError
from jupcron.scheduling import window as win
from jupcron.scheduling.schedule import is_late, next_fire_times
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)

UNAVAILABLE_ERROR = "missed: the store was unavailable until the slot's grace period had passed"
UNAVAILABLE_CHANGED_ERROR = "missed: the store was unavailable, and the plan changed since"
NOT_LEADING_ERROR = "missed: no daemon led its wallet until the slot's grace period had passed"
LATE_CHUNK = 100  # slots of a late fire retried at a time while the store is unavailable


class Outages:
    """What the retries need of the scheduler (it defines them)."""

    _reader: sessionmaker[Session]
    _runs: RunStore
    _clock: Callable[[], datetime]
    _aps: BackgroundScheduler
    _store_retry: float
    _on_misfire: Callable[[PlanRecord, list[datetime]], None] | None

    if TYPE_CHECKING:  # the scheduler's own, for the type checker

        def _aps_time(self, moment: datetime) -> datetime: ...

        def _call(self, plan: PlanRecord, slot: datetime) -> bool: ...

        def _handed_back(self, plan_id: int) -> None: ...

        def _handed(self, plan_id: int) -> None: ...

        def _queue_after(self, plan: PlanRecord, after: datetime) -> None: ...

    _lock: threading.RLock
    _window: win.Window

    def _late_unavailable(
        self, plan: PlanRecord, slot: datetime, now: datetime, exc: Exception
    ) -> bool:
        """A late fire found the store unavailable (called with `_lock` held): `slot`
        and the plan's slots after it up to `now` (at most `LATE_CHUNK`) are retried,
        and the plan's next slot is queued after the last of them (a slot still past is
        due at once: the next chunk). False: `slot` may still lack a row."""
        missed = [t for t in next_fire_times(plan.schedule, slot, LATE_CHUNK) if t <= now]
        self._store_unavailable(plan, slot, exc)
        for later in missed:
            self._handed(plan.id)  # each retry hands its slot back
            self._store_unavailable(plan, later, exc)
        self._queue_after(plan, missed[-1] if missed else slot)
        return False

    def _due_failed(self, item: win.Entry, exc: Exception) -> bool:
        """A due slot's path raised (a bug): said, the plan's next slot queued if it was
        not yet, and the slot retried like one that found the store unavailable."""
        plan, slot = item.plan, item.slot
        log.error("fire_failed", plan=plan.name, scheduled_for=slot.isoformat(),
                  error=str(exc), exc_info=exc)  # fmt: skip
        with self._lock:
            if self._window.live.get(plan.id) is item:
                self._queue_after(plan, slot)
        self._store_unavailable(plan, slot, exc)
        return False

    def _store_unavailable(self, plan: PlanRecord, slot: datetime, exc: Exception) -> None:
        not_leading = isinstance(exc, NotLeadingError)
        (log.warning if not_leading else log.error)(
            "fire_not_leading" if not_leading else "fire_store_unavailable", plan=plan.name,
            scheduled_for=slot.isoformat(), error=str(exc), retry_in=self._store_retry,
        )  # fmt: skip
        self._aps.add_job(
            self._retry,
            "date",
            run_date=self._aps_time(self._clock() + timedelta(seconds=self._store_retry)),
            args=[plan, slot.isoformat(), not_leading],
            id=f"plan-{plan.id}-v{plan.version}-retry-{slot.isoformat()}",
            replace_existing=True,
        )

    def _retry(self, plan: PlanRecord, slot_text: str, not_leading: bool = False) -> None:
        """Fire a slot again after the store was unavailable; once its grace has passed
        (or its plan changed), record it as skipped instead. Retried until one of the
        two reaches the store: the slot's unique key makes a repeat harmless."""
        slot = datetime.fromisoformat(slot_text)
        try:
            with transaction(self._reader) as session:
                current = store_plans.plan_by_id(session, plan.id)
        except (JupcronError, SQLAlchemyError) as exc:
            self._store_unavailable(plan, slot, exc)
            return
        if current is None or not current.enabled or current.version != plan.version:
            settled = self._skip_unfired(plan, slot, UNAVAILABLE_CHANGED_ERROR) is not None
        elif is_late(plan.schedule, plan.name, slot, self._clock()):
            why = NOT_LEADING_ERROR if not_leading else UNAVAILABLE_ERROR
            taken = self._skip_unfired(plan, slot, why)
            if taken and self._on_misfire is not None:
                self._on_misfire(plan, [slot])
            settled = taken is not None
        else:
            settled = self._call(plan, slot)
        if settled:  # recorded or claimed: the plan's next slot may be written
            self._handed_back(plan.id)

    def _skip_unfired(self, plan: PlanRecord, slot: datetime, error: str) -> bool | None:
        """Record the slot as skipped; whether this call recorded it (False: it had a
        row already), None when the store was unavailable again (retried later)."""
        try:
            taken = self._runs.skip(plan, [slot], now=self._clock(), error=error)
        except StoreBusyError as exc:
            self._store_unavailable(plan, slot, exc)
            return None
        if taken:
            log.warning("run_missed", plan=plan.name, scheduled_for=slot.isoformat(), reason=error)
        return bool(taken)


# APScheduler checks a job's callable against its args with `inspect.signature` on
# every add_job; inspect honours a precomputed `__signature__`, so the check stays
# (and stays right) but costs no re-derivation.
Outages._retry.__signature__ = inspect.signature(Outages._retry)  # type: ignore[attr-defined]
