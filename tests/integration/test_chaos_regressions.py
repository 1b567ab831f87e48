"""Regression tests for bugs the chaos run (tests/chaos) found, each named after its bug."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import Scheduler
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.models import Plan, Run
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run


class BlockingFires:
    """Claims like the runner; the plan `blocker` holds its worker until released."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.factory = factory
        self.blocking = threading.Event()
        self.release = threading.Event()
        self.claimed: list[tuple[str, datetime]] = []
        self.cond = threading.Condition()

    def __call__(self, plan: PlanRecord, slot: datetime) -> None:
        if plan.name == "blocker" and not self.release.is_set():
            self.blocking.set()
            self.release.wait(30)
        now = datetime.now(UTC)
        run_id = record_run(self.factory, plan, slot, now=now, status=RunStatus.SUCCEEDED)
        with self.cond:
            if run_id is not None:
                self.claimed.append((plan.name, slot))
            self.cond.notify_all()


@pytest.fixture
def started() -> Iterator[list[Scheduler]]:
    made: list[Scheduler] = []
    yield made
    for scheduler in made:
        scheduler.stop(wait=False)


def _slots(factory: sessionmaker[Session], name: str) -> dict[datetime, str]:
    with transaction(factory) as s:
        rows = s.execute(select(Run.scheduled_for, Run.status).join(Plan).where(Plan.name == name))
        return {slot.replace(tzinfo=UTC) if slot.tzinfo is None else slot: st for slot, st in rows}


def _first_slot(factory: sessionmaker[Session], name: str) -> datetime:
    """The plan's first slot as its apply wrote it: the first after the write began
    (`plans.apply`), which a loaded machine puts a second or more after the apply's
    `now`."""
    with transaction(factory) as s:
        slot = s.execute(select(Plan.next_fire).where(Plan.name == name)).scalar_one()
    assert slot is not None
    return slot.replace(tzinfo=UTC) if slot.tzinfo is None else slot


def _every_second(first: datetime, until: datetime) -> list[datetime]:
    """The slots of an `every: 1s` plan whose first slot is `first`, up to `until`."""
    slots = []
    moment = first
    while moment <= until:
        slots.append(moment)
        moment += timedelta(seconds=1)
    return slots


def test_slot_queued_behind_busy_workers_is_lost_when_the_plan_changes(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """Chaos seed 2 (PostgreSQL): a slot came due while every worker was busy; the plan
    was re-applied before the queued fire ran; the fire saw the old version and returned,
    and the new version's catch-up starts at its own apply time: the slot had no row."""
    plans: list[dict[str, Any]] = [
        swap_plan("blocker", every="1h"),
        swap_plan("target", every="1s"),
    ]
    plans[0]["schedule"] = {"at": (datetime.now(UTC) + timedelta(seconds=2)).replace(
        microsecond=0).isoformat()}  # fmt: skip
    apply_paths(sqlite_factory, [plan_files({"a.yaml": plans})], now=datetime.now(UTC))
    first = _first_slot(sqlite_factory, "target")
    fires = BlockingFires(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires, workers=1, poll_interval=3600)
    started.append(scheduler)
    scheduler.start()
    try:
        assert fires.blocking.wait(10)  # the only worker is busy; target's slots queue
        threading.Event().wait(1.5)
        changed = datetime.now(UTC)
        plans[1]["request"]["amount"] = 2_000_000
        apply_paths(sqlite_factory, [plan_files({"a.yaml": plans})], now=changed)
        scheduler.reload()
    finally:
        fires.release.set()
    with fires.cond:
        assert fires.cond.wait_for(
            lambda: any(n == "target" and s > changed for n, s in fires.claimed), 10
        )
    rows = _slots(sqlite_factory, "target")
    # every target slot from the first apply to the change has a row (run or skipped)
    expected = _every_second(first, changed)
    missing = [s.isoformat() for s in expected if s not in rows]
    assert not missing, (missing, sorted(rows))
    assert rows[expected[-1]] in ("succeeded", "skipped")


def test_slot_queued_behind_busy_workers_is_lost_when_the_plan_is_disabled(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """The disable twin of the test above: a slot came due while every worker was busy,
    the plan was disabled before the queued fire ran, and the fire returned without a row."""
    blocker = swap_plan("blocker", every="1h")
    blocker["schedule"] = {"at": (datetime.now(UTC) + timedelta(seconds=2)).replace(
        microsecond=0).isoformat()}  # fmt: skip
    target = swap_plan("target", every="1s")
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [blocker, target]})], now=datetime.now(UTC))
    first = _first_slot(sqlite_factory, "target")
    fires = BlockingFires(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires, workers=1, poll_interval=3600)
    started.append(scheduler)
    scheduler.start()
    try:
        assert fires.blocking.wait(10)  # the only worker is busy; target's slots queue
        threading.Event().wait(1.5)
        disabled = datetime.now(UTC)
        apply_paths(sqlite_factory, [plan_files({"a.yaml": [blocker]})], now=disabled)
        diff = scheduler.reload()
        assert diff is not None
        assert diff.disabled == ("target",)
    finally:
        fires.release.set()
    with fires.cond:
        assert fires.cond.wait_for(lambda: any(n == "blocker" for n, _ in fires.claimed), 10)
    rows = _slots(sqlite_factory, "target")
    expected = _every_second(first, disabled)
    missing = [s.isoformat() for s in expected if s not in rows]
    assert not missing, (missing, sorted(rows))
    assert all(slot <= disabled for slot in rows)  # nothing recorded after the disable


def test_slots_of_the_old_version_are_lost_when_the_daemon_dies_across_a_plan_change(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """Chaos seed 2 (PostgreSQL): the plan was re-applied while the daemon was down (or
    was killed before its reload); at restart the catch-up started at the new version's
    apply time, so the old version's slots between its last run and the change had no row."""
    t0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    plan = swap_plan("hourly", every="1h")
    # applied an hour before its first slot, t0, which ran (a daemon moves the stored next
    # slot on as it claims one: at t0, with t0's row, it is where a kill could leave it)
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [plan]})], now=t0 - timedelta(hours=1))
    with transaction(sqlite_factory) as s:
        record = store_plans.get_plan(s, "hourly")
    assert record is not None
    assert _first_slot(sqlite_factory, "hourly") == t0
    record_run(sqlite_factory, record, t0, now=t0, status=RunStatus.SUCCEEDED)  # the last run
    plan["request"]["amount"] = 2_000_000
    changed = t0 + timedelta(hours=2, minutes=30)
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [plan]})], now=changed)
    offset = changed + timedelta(minutes=1) - datetime.now(UTC)
    scheduler = Scheduler(
        sqlite_factory, BlockingFires(sqlite_factory), clock=lambda: datetime.now(UTC) + offset
    )
    started.append(scheduler)
    scheduler.start()
    rows = _slots(sqlite_factory, "hourly")
    assert rows == {
        t0: "succeeded",
        t0 + timedelta(hours=1): "skipped",
        t0 + timedelta(hours=2): "skipped",
    }
