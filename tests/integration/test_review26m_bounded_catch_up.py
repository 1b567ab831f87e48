"""A start after an outage lists only about the newest 1,000 missed slots of a plan
(`jupcron.scheduling.catchup`), not every slot of its 31-day look-back: an
``every: 1s`` plan back after 10 days listed 864,000 datetimes (~50 MB) with the
scheduler's lock held, then kept the newest 1,000. The rows written, the slot run,
the slot queued next and the `run_missed` line are what they were.

Real SQLite and PostgreSQL; the real `Scheduler`, its clock stopped at the start."""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.catchup import MAX_SKIPPED
from jupcron.scheduling.schedule import jitter_delay, next_fire_times
from jupcron.scheduling.scheduler import MISSED_ERROR, Scheduler
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.fixtures.scheduler import Fires, run_rows

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
BACK = T0 + timedelta(days=10, milliseconds=500)  # the daemon starts again
SECOND = timedelta(seconds=1)
PEAK_BYTES = 8_000_000  # 864,000 datetimes in a list take ~50 MB


def stored(factory: sessionmaker[Session], plan_files: PlanFiles, **schedule: Any) -> PlanRecord:
    """An every-1s plan applied a day before T0, its T0 slot run, T0 + 1s its next
    slot: then the daemon went down."""
    plan: dict[str, Any] = swap_plan("fast", every="1s")
    plan["schedule"].update(schedule)
    apply_paths(factory, [plan_files({"a.yaml": [plan]})], now=T0 - timedelta(days=1))
    with transaction(factory) as s:
        record = store_plans.get_plan(s, "fast")
    assert record is not None
    record_run(factory, record, T0, now=T0, status=RunStatus.SUCCEEDED)
    with transaction(factory) as s:
        firing.set_next(s, {record.id: (T0 + SECOND, record.version)}, settle=True)
    return record


def start(factory: sessionmaker[Session], started: list[Scheduler]) -> tuple[Fires, int, Any]:
    """Start a scheduler at `BACK` (its clock stopped there); its fires, the start's
    peak memory and its log."""
    fires = Fires(factory)
    scheduler = Scheduler(factory, fires, clock=lambda: BACK)
    started.append(scheduler)
    with capture_logs() as logs:
        tracemalloc.start()
        try:
            scheduler.start()
            used = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert fires.wait_for(lambda: len(fires.calls) == 1)
        next_fire = scheduler.next_fires().get("fast")
        scheduler.stop(wait=True)
    return fires, used, (logs, next_fire)


def missed(factory: sessionmaker[Session]) -> list[datetime]:
    return [slot for slot, status, error in run_rows(factory)
            if status == "skipped" and error == MISSED_ERROR]  # fmt: skip


def test_a_ten_day_outage_of_an_every_second_plan_lists_only_its_newest_slots(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    stored(plans_factory, plan_files)
    fires, used, (logs, next_fire) = start(plans_factory, started)

    assert used < PEAK_BYTES, f"{used:,} bytes at the start: every slot of ten days listed"
    newest = T0 + timedelta(days=10)  # run-once: the newest slot, within its grace, runs
    assert fires.calls == [("fast", newest)]
    assert missed(plans_factory) == [newest - (MAX_SKIPPED - i) * SECOND
                                     for i in range(MAX_SKIPPED)]  # fmt: skip
    assert next_fire == newest + SECOND
    said = [(e["skipped"], e["truncated"]) for e in logs if e["event"] == "run_missed"]
    assert said == [(MAX_SKIPPED, True)]
    assert [e["scheduled_for"] for e in logs if e["event"] == "run_caught_up"] == [
        newest.isoformat()
    ]


def test_slots_waiting_out_their_jitter_are_still_the_next_not_missed(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    record = stored(plans_factory, plan_files, jitter="60s", grace="5m")
    schedule = record.schedule
    recent = next_fire_times(schedule, BACK - 2 * MAX_SKIPPED * SECOND, 2 * MAX_SKIPPED)
    recent = [s for s in recent if s <= BACK]
    waiting = next(s for s in recent if s + jitter_delay(schedule, "fast", s) > BACK)
    due = [s for s in recent if s < waiting]
    fires, used, (logs, next_fire) = start(plans_factory, started)

    assert used < PEAK_BYTES, f"{used:,} bytes at the start: every slot of ten days listed"
    assert fires.calls == [("fast", due[-1])]
    assert missed(plans_factory) == due[-MAX_SKIPPED - 1 : -1]
    assert next_fire == waiting, "the slot waiting out its jitter is the next one"
    said = [(e["skipped"], e["truncated"]) for e in logs if e["event"] == "run_missed"]
    assert said == [(MAX_SKIPPED, True)]
