"""Scheduler jobs stay one per plan when reload skips the job scan for plans it
never knew (the scan made start O(n²): 10,000 plans took 19 s to READY; tests/bench)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from apscheduler.util import check_callable_args
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import WATCH_JOB, Scheduler
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan


def ignore(plan: PlanRecord, slot: datetime) -> None:
    pass


def test_one_job_per_plan_across_start_change_and_disable(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    now = datetime.now(UTC)
    plans = [swap_plan(name, every="1d") for name in ("a", "b", "c")]
    apply_paths(sqlite_factory, [plan_files({"p.yaml": plans})], now=now)
    scheduler = Scheduler(sqlite_factory, ignore, poll_interval=3600)
    scheduler.start()
    try:
        ids = [j.id for j in scheduler._aps.get_jobs() if j.id != WATCH_JOB]
        assert len(ids) == 3
        assert len({i.split("-")[1] for i in ids}) == 3  # one per plan id
        assert all("-v1-" in i for i in ids)

        changed = [swap_plan("a", every="2d"), swap_plan("c", every="1d")]  # a changed, b gone
        apply_paths(
            sqlite_factory, [plan_files({"p.yaml": changed})], now=now + timedelta(seconds=1)
        )
        scheduler.reload()
        ids = [j.id for j in scheduler._aps.get_jobs() if j.id != WATCH_JOB]
        assert len(ids) == 2
        assert sorted("-v2-" in i for i in ids) == [False, True]  # a's v1 job is gone
        assert set(scheduler.next_fires()) == {"a", "c"}
    finally:
        scheduler.stop(wait=True)


def test_apscheduler_still_checks_job_args_with_the_precomputed_signatures(
    sqlite_factory: sessionmaker[Session],
) -> None:
    scheduler = Scheduler(sqlite_factory, ignore)
    check_callable_args(scheduler._due, [1, 2, "2026-01-01T00:00:00+00:00"], {})
    check_callable_args(scheduler._retry, [None, "2026-01-01T00:00:00+00:00"], {})
    with pytest.raises(ValueError, match="not been supplied: slot_text"):
        check_callable_args(scheduler._due, [1, 2], {})
    with pytest.raises(ValueError, match="allowed: 3, given in args: 4"):
        check_callable_args(scheduler._fire_now, [1, 2, "x", "extra"], {})
