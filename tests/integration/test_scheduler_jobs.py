"""The scheduler keeps no job (nor any object) per plan: each plan's next slot is a row
(``plans.next_fire``), and APScheduler holds the plans watch alone. On SQLite and
PostgreSQL: apply adopts, a change and a disable are settled, a restart reads the
stored slots back, and the window is read from the store in time order, a page at a time."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from apscheduler.util import check_callable_args
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import WATCH_JOB, Scheduler
from jupcron.scheduling.window import FLUSH_EVERY
from jupcron.store import firing
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.support.wait import wait_until


def ignore(plan: PlanRecord, slot: datetime) -> None:
    pass


def stored(factory: sessionmaker[Session]) -> dict[str, tuple[Any, ...]]:
    with transaction(factory) as s:
        rows = s.execute(select(Plan.name, Plan.version, Plan.fire_version, Plan.next_fire,
                                Plan.enabled))  # fmt: skip
        return {name: (version, fired, slot, on) for name, version, fired, slot, on in rows}


def test_no_job_per_plan_across_start_change_and_disable(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    now = datetime.now(UTC)
    plans = [swap_plan(name, every="1d") for name in ("a", "b", "c")]
    apply_paths(plans_factory, [plan_files({"p.yaml": plans})], now=now)
    tomorrow = datetime.fromtimestamp((now.timestamp() // 86400 + 1) * 86400, UTC)
    # apply stores each plan settled at its first slot: a start rewrites no row
    assert {n: r[1:3] for n, r in stored(plans_factory).items()} == {
        n: (1, tomorrow) for n in "abc"
    }
    scheduler = Scheduler(plans_factory, ignore, poll_interval=3600)
    scheduler.start()
    try:
        assert [j.id for j in scheduler._aps.get_jobs()] == [WATCH_JOB]
        assert {n: r[:3] for n, r in stored(plans_factory).items()} == {
            n: (1, 1, tomorrow) for n in "abc"
        }
        changed = [swap_plan("a", every="2d"), swap_plan("c", every="1d")]  # a changed, b gone
        apply_paths(
            plans_factory, [plan_files({"p.yaml": changed})], now=now + timedelta(seconds=1)
        )
        diff = scheduler.reload()
        assert diff is not None
        assert (diff.added, diff.changed, diff.disabled) == ((), ("a",), ("b",))
        assert [j.id for j in scheduler._aps.get_jobs()] == [WATCH_JOB]
        rows = stored(plans_factory)
        assert rows["a"][:2] == (2, 2)  # settled at its new version
        assert rows["b"] == (2, 2, None, False)  # disabled: no slot
        assert set(scheduler.next_fires()) == {"a", "c"}
    finally:
        scheduler.stop(wait=True)
    # a restart reads the stored slots: nothing to adopt or settle
    again = Scheduler(plans_factory, ignore, poll_interval=3600)
    again.start()
    try:
        assert again.reload() is None
        assert set(again.next_fires()) == {"a", "c"}
    finally:
        again.stop(wait=True)


def test_apscheduler_still_checks_the_retry_jobs_args_with_the_precomputed_signature(
    sqlite_factory: sessionmaker[Session],
) -> None:
    scheduler = Scheduler(sqlite_factory, ignore)
    check_callable_args(scheduler._retry, [None, "2026-01-01T00:00:00+00:00"], {})
    with pytest.raises(ValueError, match="not been supplied: slot_text"):
        check_callable_args(scheduler._retry, [None], {})


def test_the_window_is_read_in_time_order_a_page_at_a_time(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    """Keyset pages over (next_fire, id): plans sharing a slot are split across pages
    and none is read twice or left out."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    due = [now + timedelta(minutes=m % 4) for m in range(23)]
    plans = [swap_plan(f"p{i:02d}") for i in range(23)]
    for plan, at in zip(plans, due, strict=True):
        plan["schedule"] = {"at": at.isoformat()}
    apply_paths(plans_factory, [plan_files({"p.yaml": plans})], now=now - timedelta(hours=1))
    with transaction(plans_factory) as s:
        firing.adopt(s)
    read: list[tuple[datetime, int]] = []
    cursor = None
    until = now + timedelta(minutes=3)  # the last minute's plans are beyond the window
    while True:
        with transaction(plans_factory) as s:
            page = firing.due_page(s, cursor, until, 4)
        read += [(slot, plan.id) for plan, slot in page]
        if len(page) < 4:
            break
        cursor = read[-1]
    assert read == sorted(read)
    assert len(set(read)) == len(read) == sum(1 for at in due if at < until)


def test_a_slot_under_way_keeps_its_plan_next_fire_until_it_is_claimed(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    """A crash between a slot's hand-over and its claim must leave that slot for the
    next start to settle: the stored next_fire does not pass it before its row exists
    (it once became NULL for a one-shot plan at the hand-over, and the slot was lost)."""
    now = datetime.now(UTC)
    due = (now + timedelta(seconds=2)).replace(microsecond=0)
    plan = swap_plan("once", schedule={"at": due.isoformat(), "grace": 120})
    apply_paths(plans_factory, [plan_files({"p.yaml": [plan]})], now=now)
    handed, release = threading.Event(), threading.Event()
    claimed: list[datetime] = []

    def fire(record: PlanRecord, slot: datetime) -> None:
        handed.set()
        assert release.wait(30)
        assert record_run(plans_factory, record, slot, now=slot) is not None
        claimed.append(slot)

    scheduler = Scheduler(plans_factory, fire, poll_interval=3600)
    scheduler.start()
    try:
        assert handed.wait(30)
        # several flush periods pass while the fire has not claimed its slot
        deadline = time.monotonic() + 3 * FLUSH_EVERY
        while time.monotonic() < deadline:
            assert stored(plans_factory)["once"][2] == due
            time.sleep(0.1)
        release.set()
        assert wait_until(lambda: stored(plans_factory)["once"][2] is None, timeout=30)
        assert claimed == [due]
    finally:
        release.set()
        scheduler.stop(wait=True)
