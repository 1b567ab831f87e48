"""The scheduler on a real SQLite store, back from downtime across a spring gap that
ends the local day (America/Nuuk, 2024-03-30 23:00 -02 -> 2024-03-31 00:00 -01):
`run-once` runs the latest missed slot, and does not record it as skipped first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import MISSED_ERROR, Scheduler
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.fixtures.scheduler import Fires, clock_at, run_rows

GAP = datetime(2024, 3, 31, 1, 0, tzinfo=UTC)  # 2024-03-31T00:00-01:00, first hour after it


def test_run_once_across_a_gap_at_midnight_runs_the_latest_slot(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    plan: dict[str, Any] = swap_plan("nuuk")
    plan["schedule"] = {"cron": "0 * * * *", "timezone": "America/Nuuk", "grace": "5m"}
    last = GAP - timedelta(hours=2)  # 21:00 -02, the last run before the daemon went down
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [plan]})], now=last - timedelta(days=1))
    with transaction(sqlite_factory) as s:
        record = store_plans.get_plan(s, "nuuk")
    assert record is not None
    record_run(sqlite_factory, record, last, now=last, status=RunStatus.SUCCEEDED)
    with transaction(sqlite_factory) as s:
        firing.set_next(s, {record.id: (last + timedelta(hours=1), record.version)}, settle=True)

    fires = Fires(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires, clock=clock_at(GAP + timedelta(minutes=2)))
    started.append(scheduler)
    scheduler.start()
    assert fires.wait_for(lambda: len(fires.calls) == 1)
    scheduler.stop(wait=True)
    assert fires.claimed == [("nuuk", GAP)]
    assert run_rows(sqlite_factory) == [
        (last, "succeeded", None),
        (GAP - timedelta(hours=1), "skipped", MISSED_ERROR),
        (GAP, "succeeded", None),
    ]
