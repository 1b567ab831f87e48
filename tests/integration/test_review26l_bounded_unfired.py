"""A changed plan's unfired slots (its old versions', `jupcron.scheduling.slots`) are
bounded as the start's catch-up bounds a plan's missed ones: at most 31 days back,
at most 1,000 slots (the newest), the rest flagged ``truncated`` in the one
`run_missed` line. Before, `record_unfired` and `record_superseded` listed every slot
from the old version's pending one to its change (an `every: 1s` plan changed after
10 days: 864,000 datetimes, built with the scheduler's lock held) and kept the
*oldest* 1,000, saying nothing of the rest; and looked back without a limit.

Real SQLite and PostgreSQL (the run store's `skip`); the start's reload is the real
`Scheduler`'s."""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.catchup import MAX_SKIPPED
from jupcron.scheduling.schedule import parse_schedule
from jupcron.scheduling.scheduler import Scheduler
from jupcron.scheduling.slots import CHANGED_ERROR, Superseded, record_superseded, record_unfired
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.fixtures.scheduler import Fires, clock_at, run_rows

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
CHANGE = T0 + timedelta(days=10)  # the plan changed while no daemon ran
SECOND = timedelta(seconds=1)
PEAK_BYTES = 8_000_000  # 864,000 datetimes in a list take ~50 MB


def plan(every: str, amount: int = 1_000_000) -> dict[str, Any]:
    found: dict[str, Any] = swap_plan("fast", every=every)
    found["request"]["amount"] = amount
    return found


def stored(factory: sessionmaker[Session], plan_files: PlanFiles, every: str) -> PlanRecord:
    """The plan as applied a day before T0, its T0 slot run, its next slot T0's next."""
    apply_paths(factory, [plan_files({"a.yaml": [plan(every)]})], now=T0 - timedelta(days=1))
    with transaction(factory) as s:
        record = store_plans.get_plan(s, "fast")
    assert record is not None
    record_run(factory, record, T0, now=T0, status=RunStatus.SUCCEEDED)
    step = parse_schedule(plan(every)["schedule"]).every
    assert step is not None
    with transaction(factory) as s:
        firing.set_next(s, {record.id: (T0 + step * SECOND, 1)}, settle=True)
    return record


def skipped_for_change(factory: sessionmaker[Session]) -> list[datetime]:
    return [slot for slot, status, error in run_rows(factory)
            if status == "skipped" and error == CHANGED_ERROR]  # fmt: skip


def peak(call: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_an_every_second_plan_changed_after_ten_days_records_its_newest_slots(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    stored(plans_factory, plan_files, "1s")
    apply_paths(plans_factory, [plan_files({"a.yaml": [plan("1s", 2_000_000)]})],
                now=CHANGE)  # fmt: skip
    fires = Fires(plans_factory)
    scheduler = Scheduler(plans_factory, fires, clock=clock_at(CHANGE + timedelta(minutes=1)))
    started.append(scheduler)
    with capture_logs() as logs:
        scheduler.start()
        scheduler.stop(wait=True)
    recorded = skipped_for_change(plans_factory)
    assert len(recorded) == MAX_SKIPPED
    assert recorded[0] == CHANGE - (MAX_SKIPPED - 1) * SECOND, "not the newest slots"
    assert recorded[-1] == CHANGE  # the old version's last slot
    said = [e for e in logs if e["event"] == "run_missed" and e.get("reason") == "plan_changed"]
    assert [(e["skipped"], e.get("truncated")) for e in said] == [(MAX_SKIPPED, True)]


def test_the_unfired_slots_are_not_all_listed(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    record = stored(plans_factory, plan_files, "1s")
    store = SqlRunStore(plans_factory.kw["bind"], group_commit=False)
    now = CHANGE + timedelta(minutes=1)
    done, used = peak(lambda: record_unfired(store, record, record.schedule, T0 + SECOND,
                                             now=now, until=CHANGE))  # fmt: skip
    assert used < PEAK_BYTES, f"{used:,} bytes: every slot of ten days listed"
    assert (done.skipped, done.truncated) == (MAX_SKIPPED, True)


def test_a_superseded_versions_slots_are_not_all_listed(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    record = stored(plans_factory, plan_files, "1s")
    store = SqlRunStore(plans_factory.kw["bind"], group_commit=False)
    between = [Superseded(record.schedule, T0, CHANGE)]
    done, used = peak(lambda: record_superseded(store, record, between,
                                                now=CHANGE + timedelta(minutes=1)))  # fmt: skip
    assert used < PEAK_BYTES, f"{used:,} bytes: every slot of ten days listed"
    assert (done.skipped, done.truncated) == (MAX_SKIPPED, True)
    assert skipped_for_change(plans_factory)[0] == CHANGE - (MAX_SKIPPED - 1) * SECOND


def test_slots_older_than_the_catch_ups_31_days_are_flagged_not_recorded(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    record = stored(plans_factory, plan_files, "1h")
    store = SqlRunStore(plans_factory.kw["bind"], group_commit=False)
    change = T0 + timedelta(days=40)  # 960 hourly slots: fewer than MAX_SKIPPED
    now = change + timedelta(minutes=1)
    done = record_unfired(store, record, record.schedule, T0 + timedelta(hours=1),
                          now=now, until=change)  # fmt: skip
    recorded = skipped_for_change(plans_factory)
    assert recorded[0] > now - timedelta(days=31), "looked back further than a catch-up"
    assert recorded[-1] == change
    assert (done.skipped, done.truncated) == (len(recorded), True)
