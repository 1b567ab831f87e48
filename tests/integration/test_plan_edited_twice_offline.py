"""Two edits of a plan while no daemon ran: each version's slots that passed while it
was the plan in force (and nobody fired them) are recorded, the middle one's too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import MISSED_ERROR, Scheduler
from jupcron.scheduling.slots import CHANGED_ERROR
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.fixtures.scheduler import Fires, clock_at, run_rows

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def version(schedule: dict[str, Any], amount: int) -> dict[str, Any]:
    plan = swap_plan("edited")
    plan["schedule"] = {**schedule, "grace": "5m"}
    plan["request"]["amount"] = amount
    return plan


@pytest.mark.parametrize("second_edit", [40, 80])
def test_the_middle_versions_slots_are_recorded(
    sqlite_factory: sessionmaker[Session],
    plan_files: PlanFiles,
    started: list[Scheduler],
    second_edit: int,
) -> None:
    """v1 (every hour) ran 09:00; while no daemon ran, v2 (at :30) was applied at 09:10
    and v3 (another amount) at 09:40 or 10:20. v2's 09:30 is recorded; v1's 10:00 (it
    was no longer the plan then) is not."""
    hourly, half_past = {"every": "1h"}, {"cron": "30 * * * *"}
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [version(hourly, 1_000_000)]})],
                now=T0 - timedelta(days=1))  # fmt: skip
    with transaction(sqlite_factory) as s:
        record = store_plans.get_plan(s, "edited")
    assert record is not None
    record_run(sqlite_factory, record, T0, now=T0, status=RunStatus.SUCCEEDED)  # 09:00 ran
    with transaction(sqlite_factory) as s:
        firing.set_next(s, {record.id: (T0 + timedelta(hours=1), 1)}, settle=True)
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [version(half_past, 1_000_000)]})],
                now=T0 + timedelta(minutes=10))  # fmt: skip
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [version(half_past, 2_000_000)]})],
                now=T0 + timedelta(minutes=second_edit))  # fmt: skip

    fires = Fires(sqlite_factory)
    scheduler = Scheduler(
        sqlite_factory, fires, clock=clock_at(T0 + timedelta(minutes=second_edit + 5))
    )
    started.append(scheduler)
    scheduler.start()
    scheduler.stop(wait=True)
    assert fires.calls == []
    rows = run_rows(sqlite_factory)
    assert rows[0] == (T0, "succeeded", None)
    assert [r[0] for r in rows[1:]] == [T0 + timedelta(minutes=30)]
    assert rows[1][1] == "skipped"
    assert rows[1][2] in (CHANGED_ERROR, MISSED_ERROR)
    assert scheduler.next_fires() == {"edited": T0 + timedelta(minutes=90)}
