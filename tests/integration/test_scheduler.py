"""The scheduler on a real SQLite store: misfires after downtime, live fires, reloads.

The clock is a parameter: tests pass one that runs ahead of the real clock by
a fixed offset, so "the daemon was down for three hours" needs no sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import MISSED_ERROR, Scheduler
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.fixtures.scheduler import Fires, clock_at, run_rows

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def setup_hourly(factory: sessionmaker[Session], plan_files: PlanFiles, misfire: str) -> PlanRecord:
    plan: dict[str, Any] = swap_plan("hourly", every="1h")
    plan["schedule"].update({"misfire": misfire, "grace": "5m"})
    apply_paths(factory, [plan_files({"a.yaml": [plan]})], now=T0 - timedelta(days=1))
    with transaction(factory) as s:
        record = store_plans.get_plan(s, "hourly")
    assert record is not None
    # the last run before the daemon went down, and the next slot it stored after it
    record_run(factory, record, T0, now=T0, status=RunStatus.SUCCEEDED)
    with transaction(factory) as s:
        firing.set_next(s, {record.id: (T0 + timedelta(hours=1), record.version)}, settle=True)
    return record


@pytest.mark.parametrize("misfire", ["run-once", "skip"])
def test_down_across_three_fire_times(
    sqlite_factory: sessionmaker[Session],
    plan_files: PlanFiles,
    started: list[Scheduler],
    misfire: str,
) -> None:
    setup_hourly(sqlite_factory, plan_files, misfire)
    fires = Fires(sqlite_factory)
    # back at 12:02: 10:00, 11:00 and 12:00 were missed
    scheduler = Scheduler(sqlite_factory, fires, clock=clock_at(T0 + timedelta(hours=3, minutes=2)))
    started.append(scheduler)
    with capture_logs() as logs:
        scheduler.start()
        if misfire == "run-once":
            assert fires.wait_for(lambda: len(fires.calls) == 1)
    slots = [T0 + timedelta(hours=h) for h in (1, 2, 3)]
    rows = run_rows(sqlite_factory)
    if misfire == "run-once":
        assert fires.calls == [("hourly", slots[2])]
        assert rows[1:] == [
            (slots[0], "skipped", MISSED_ERROR),
            (slots[1], "skipped", MISSED_ERROR),
            (slots[2], "succeeded", None),
        ]
    else:
        assert rows[1:] == [(s, "skipped", MISSED_ERROR) for s in slots]
    assert "run_missed" in [e["event"] for e in logs]
    assert scheduler.next_fires() == {"hourly": T0 + timedelta(hours=4)}
    scheduler.stop(wait=True)
    assert len(fires.calls) == (1 if misfire == "run-once" else 0)

    # a second start (restart) finds nothing new to settle
    again = Scheduler(sqlite_factory, fires, clock=clock_at(T0 + timedelta(hours=3, minutes=3)))
    started.append(again)
    again.start()
    again.stop(wait=True)
    assert run_rows(sqlite_factory) == rows


def test_next_fires_shows_the_next_slot_while_a_caught_up_fire_is_still_under_way(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """The stored next slot is written only once the handed-over slot is back, so
    meanwhile `next_fires` (status, the page) reads the one held in memory, not the
    stale stored slot from before the outage (this raced in CI)."""
    setup_hourly(sqlite_factory, plan_files, "run-once")
    fires, gate = Fires(sqlite_factory), threading.Event()

    def held(plan: PlanRecord, slot: datetime) -> None:
        fires(plan, slot)
        gate.wait(15)

    scheduler = Scheduler(sqlite_factory, held, clock=clock_at(T0 + timedelta(hours=3, minutes=2)))
    started.append(scheduler)
    scheduler.start()
    try:
        assert fires.wait_for(lambda: len(fires.calls) == 1)
        assert scheduler.busy() == 1  # still in the fire
        assert scheduler.next_fires() == {"hourly": T0 + timedelta(hours=4)}
    finally:
        gate.set()
    scheduler.stop(wait=True)
    assert scheduler.next_fires() == {"hourly": T0 + timedelta(hours=4)}


def test_live_fires_every_second_each_slot_once(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    now = datetime.now(UTC)
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [swap_plan("fast", every="1s")]})], now=now)
    fires = Fires(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires)
    started.append(scheduler)
    scheduler.start()
    assert fires.wait_for(lambda: len(fires.calls) >= 3)
    scheduler.stop(wait=True)
    slots = [slot for _, slot in fires.calls]
    assert slots == sorted(set(slots))  # in order, no slot twice
    assert all(s.microsecond == 0 for s in slots)
    assert fires.claimed == fires.calls


def test_picks_up_apply_from_elsewhere_via_revision(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    now = datetime.now(UTC)
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [swap_plan("a", every="1d")]})], now=now)
    scheduler = Scheduler(sqlite_factory, Fires(sqlite_factory), poll_interval=0.2)
    started.append(scheduler)
    scheduler.start()
    assert set(scheduler.next_fires()) == {"a"}
    assert scheduler.healthy()

    # another shell applies: b added, a gone
    diff, _ = apply_paths(
        sqlite_factory,
        [plan_files({"b.yaml": [swap_plan("b", every="1d")]})],
        now=now + timedelta(seconds=1),
    )
    deadline = time.monotonic() + 15
    while scheduler.revision != diff.revision and time.monotonic() < deadline:
        time.sleep(0.05)
    assert scheduler.revision == diff.revision  # the watch job reloaded
    assert set(scheduler.next_fires()) == {"b"}
    assert scheduler.reload() is None  # nothing new since
    scheduler.stop(wait=True)
    assert not scheduler.healthy()


def test_reload_reports_the_diff(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    now = datetime.now(UTC)
    folder = plan_files({"a.yaml": [swap_plan("a", every="1d"), swap_plan("b", every="1d")]})
    apply_paths(sqlite_factory, [folder], now=now)
    scheduler = Scheduler(sqlite_factory, Fires(sqlite_factory), poll_interval=3600)
    started.append(scheduler)
    scheduler.start()
    folder = plan_files({"a.yaml": [swap_plan("a", every="2d"), swap_plan("c", every="1d")]})
    apply_paths(sqlite_factory, [folder], now=now + timedelta(seconds=1))
    diff = scheduler.reload()
    assert diff is not None
    assert (diff.added, diff.changed, diff.disabled) == (("c",), ("a",), ("b",))
    assert set(scheduler.next_fires()) == {"a", "c"}


def test_a_stop_counts_fires_under_way_and_starts_no_more(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """SIGTERM can land between a fire's hand-over and its claim: the daemon must wait
    for that fire (it used to close the API client under it, leaving its run pending)."""
    now = datetime.now(UTC)
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [swap_plan("fast", every="1s")]})], now=now)
    entered, release = threading.Event(), threading.Event()
    fired: list[datetime] = []

    def fire(plan: PlanRecord, slot: datetime) -> None:
        fired.append(slot)
        entered.set()
        release.wait(10)

    scheduler = Scheduler(sqlite_factory, fire)
    started.append(scheduler)
    scheduler.start()
    assert entered.wait(5)
    scheduler.stop(wait=False)
    assert scheduler.busy() == 1  # handed over and not back: a stopping daemon waits for it
    release.set()
    deadline = time.monotonic() + 5
    while scheduler.busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert scheduler.busy() == 0
    with transaction(sqlite_factory) as s:
        plan = store_plans.get_plan(s, "fast")
    assert plan is not None
    scheduler._call(plan, datetime.now(UTC).replace(microsecond=0))  # a job that starts late
    assert len(fired) == 1  # no fire starts once stopping


def test_only_the_led_plans_are_scheduled_and_a_hand_over_records_nothing(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """Issue 31 item 2: `include` (the wallets this daemon leads) filters the plans at
    every load; a plan handed to another daemon is dropped without a row, and comes
    back (its missed slots settled) when it is led again."""
    now = datetime.now(UTC)
    folder = plan_files({"a.yaml": [swap_plan("a", every="1s"), swap_plan("b", every="1d")]})
    apply_paths(sqlite_factory, [folder], now=now - timedelta(minutes=1))
    led = {"b"}
    fires = Fires(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires, poll_interval=3600,
                          include=lambda plan: plan.name in led)  # fmt: skip
    started.append(scheduler)
    scheduler.start()
    assert set(scheduler.next_fires()) == {"b"}
    led.add("a")
    assert scheduler.reload() is not None  # "a" is added
    assert fires.wait_for(lambda: any(name == "a" for name, _ in fires.calls))
    # a slot of "a" already passed its job but not yet fired is the new leader's now
    skipped = [r for r in run_rows(sqlite_factory) if r[1] == "skipped"]
    led.discard("a")
    assert scheduler.reload() is None  # a hand-over is no change of the plans
    assert set(scheduler.next_fires()) == {"b"}
    assert [r for r in run_rows(sqlite_factory) if r[1] == "skipped"] == skipped


class WatchedStore(SqlRunStore):
    """The run store, with the next slots written through it kept for the test."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        super().__init__(factory.kw["bind"])
        self.written: list[dict[int, tuple[datetime | None, int]]] = []

    def set_next(self, slots: Mapping[int, tuple[datetime | None, int]]) -> None:
        super().set_next(slots)
        self.written.append(dict(slots))


def test_next_slots_are_written_through_the_run_store(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """The next slots of plans that fired queue with the runs' writes (one group
    commit; on SQLite a writer beside it waits on the file lock, up to its busy
    timeout, with the scheduler's lock held)."""
    apply_paths(sqlite_factory, [plan_files({"a.yaml": [swap_plan("fast", every="1s")]})],
                now=datetime.now(UTC))  # fmt: skip
    fires, runs = Fires(sqlite_factory), WatchedStore(sqlite_factory)
    scheduler = Scheduler(sqlite_factory, fires, runs=runs)
    started.append(scheduler)
    scheduler.start()
    assert fires.wait_for(lambda: len(fires.claimed) >= 3)
    scheduler.stop(wait=True)  # the last next slot is written at the stop
    assert runs.written
    with transaction(sqlite_factory) as s:
        plan = store_plans.get_plan(s, "fast")
        assert plan is not None
        stored = firing.stored_next(s, [plan.id])[plan.id]
    assert runs.written[-1][plan.id][0] == stored
