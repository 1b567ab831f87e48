"""A daemon that starts (a restart, or the new leader of a wallet) shortly after a
jittered slot was due runs it (``misfire: run-once``), as a running daemon would.

A running daemon fires a slot at slot + jitter and calls it late only `grace`
seconds after that (`is_late`). The start's catch-up measured the grace from the
bare slot: with jitter up to the grace (allowed), a daemon back 30 s after such a
slot was due recorded it as ``skipped`` ("missed: daemon was down") although a
daemon that had never stopped would still have fired it.

Real SQLite store, the real scheduler; its clock is a parameter.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.schedule import (
    is_late,
    jitter_delay,
    next_fire_times,
    parse_schedule,
)
from jupcron.scheduling.scheduler import Scheduler
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.fixtures.scheduler import Fires, clock_at, run_rows

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
NAME = "hourly"
SCHEDULE = {"every": "1h", "jitter": "5m", "grace": "5m", "misfire": "run-once"}


def jittered_slot() -> tuple[datetime, timedelta]:
    """An hourly slot after T0 whose stable jitter for `NAME` is most of the grace."""
    schedule = parse_schedule(SCHEDULE)
    for slot in next_fire_times(schedule, T0, 500):
        delay = jitter_delay(schedule, NAME, slot)
        if delay >= timedelta(minutes=4):
            return slot, delay
    raise AssertionError("no slot with a long jitter among 500")


def setup(factory: sessionmaker[Session], plan_files: PlanFiles, slot: datetime) -> PlanRecord:
    plan: dict[str, Any] = swap_plan(NAME, every="1h")
    plan["schedule"].update(SCHEDULE)
    apply_paths(factory, [plan_files({"a.yaml": [plan]})], now=T0 - timedelta(days=1))
    with transaction(factory) as s:
        record = store_plans.get_plan(s, NAME)
    assert record is not None
    # the slot before ran; the daemon stored `slot` as the next one, then went down
    before = slot - timedelta(hours=1)
    record_run(factory, record, before, now=before, status=RunStatus.SUCCEEDED)
    with transaction(factory) as s:
        firing.set_next(s, {record.id: (slot, record.version)}, settle=True)
    return record


def test_a_start_just_after_a_jittered_slot_was_due_runs_it(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    slot, delay = jittered_slot()
    plan = setup(sqlite_factory, plan_files, slot)
    back = slot + delay + timedelta(seconds=30)
    # a daemon that never stopped would still fire it now
    assert not is_late(plan.schedule, plan.name, slot, back)
    fires = Fires(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires, clock=clock_at(back))
    started.append(scheduler)

    scheduler.start()

    assert fires.wait_for(lambda: len(fires.calls) == 1, timeout=5), run_rows(sqlite_factory)
    assert fires.calls == [(NAME, slot)]
    assert [(s, status) for s, status, _ in run_rows(sqlite_factory)][-1] == (slot, "succeeded")


def test_a_start_past_the_grace_after_a_jittered_slot_was_due_records_it_missed(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    slot, delay = jittered_slot()
    plan = setup(sqlite_factory, plan_files, slot)
    back = slot + delay + timedelta(minutes=5, seconds=30)
    assert is_late(plan.schedule, plan.name, slot, back)
    fires = Fires(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires, clock=clock_at(back))
    started.append(scheduler)

    scheduler.start()
    scheduler.stop(wait=True)

    assert fires.calls == []
    assert [(s, status) for s, status, _ in run_rows(sqlite_factory)][-1] == (slot, "skipped")
