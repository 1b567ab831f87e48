"""Entries that wait out their jitter outside the window (review 18g).

An entry read whose due time (slot + jitter) is past the read's horizon waits with
no plan record kept; a later read reaches its due time and reads the record again.
It must then fire once, when due; a reload that changes the plan meanwhile (its
jitter, say) settles its slot like any change does and leaves the plan scheduled,
not stuck as "waiting"; a plan whose jitter is longer than its period fires each
slot once, in order, none late.

Real SQLite file and the PostgreSQL fixture, the real scheduler; its clock is a
parameter the test moves on (no waiting for jitters of hours).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.schedule import jitter_delay, next_fire_times, parse_schedule
from jupcron.scheduling.scheduler import Scheduler
from jupcron.scheduling.slots import CHANGED_ERROR
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import MovableClock as Clock
from tests.fixtures.scheduler import Timed, run_rows
from tests.fixtures.scheduler import jittered_name as named
from tests.support.wait import wait_until

MIDNIGHT = datetime(2026, 3, 2, tzinfo=UTC)
DAILY = {"cron": "0 0 * * *", "jitter": "12h", "grace": "12h"}


def plan_id(factory: sessionmaker[Session], name: str) -> int:
    with transaction(factory) as s:
        record = store_plans.get_plan(s, name)
    assert record is not None
    return record.id


def start_before_midnight(
    factory: sessionmaker[Session], started: list[Scheduler]
) -> tuple[Scheduler, Clock, Timed]:
    clock = Clock(MIDNIGHT - timedelta(seconds=2))
    fires = Timed(factory, clock)
    scheduler = Scheduler(factory, fires, poll_interval=3600, clock=clock)
    started.append(scheduler)
    scheduler.start()
    return scheduler, clock, fires


def test_a_waiting_entry_fires_once_when_due(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    name, delay = named(DAILY, MIDNIGHT, timedelta(hours=1))
    apply_paths(plans_factory, [plan_files({"p.yaml": [swap_plan(name, schedule=DAILY)]})],
                now=MIDNIGHT - timedelta(hours=1))  # fmt: skip
    pid = plan_id(plans_factory, name)
    scheduler, clock, fires = start_before_midnight(plans_factory, started)
    # read at midnight, due an hour or more later: it waits, no record kept
    assert wait_until(lambda: pid in scheduler._window.waiting, timeout=15)
    assert pid not in scheduler._window.live

    clock.move_to(MIDNIGHT + delay - timedelta(seconds=3))
    scheduler._arm()

    assert fires.wait_for(lambda: bool(fires.calls), timeout=15), run_rows(plans_factory)
    assert fires.at[(name, MIDNIGHT)] >= MIDNIGHT + delay
    assert not fires.wait_for(lambda: len(fires.calls) > 1, timeout=1.5)
    assert fires.calls == [(name, MIDNIGHT)]


def test_a_reload_that_changes_the_jitter_of_a_waiting_plan_settles_it_and_keeps_it_scheduled(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    name, _ = named(DAILY, MIDNIGHT, timedelta(hours=1))
    apply_paths(plans_factory, [plan_files({"p.yaml": [swap_plan(name, schedule=DAILY)]})],
                now=MIDNIGHT - timedelta(hours=1))  # fmt: skip
    pid = plan_id(plans_factory, name)
    scheduler, clock, fires = start_before_midnight(plans_factory, started)
    assert wait_until(lambda: pid in scheduler._window.waiting, timeout=15)

    # ten minutes past midnight, the jitter is cut to nothing while the midnight slot
    # waits out the old one (due an hour or more after midnight)
    clock.move_to(MIDNIGHT + timedelta(minutes=10))
    quick = {**DAILY, "jitter": "0s"}
    apply_paths(plans_factory, [plan_files({"p.yaml": [swap_plan(name, schedule=quick)]})],
                now=clock())  # fmt: skip
    diff = scheduler.reload()

    assert diff is not None
    assert diff.changed == (name,)
    # the old version's slot, unfired at the change, is recorded (slots.py), not lost
    assert run_rows(plans_factory) == [(MIDNIGHT, "skipped", CHANGED_ERROR)]
    assert not scheduler._window.known(pid)
    tomorrow = MIDNIGHT + timedelta(days=1)
    assert scheduler.next_fires() == {name: tomorrow}
    # and the new version fires at its next slot
    clock.move_to(tomorrow - timedelta(seconds=2))
    scheduler._arm()
    assert fires.wait_for(lambda: (name, tomorrow) in fires.calls, timeout=15), \
        run_rows(plans_factory)  # fmt: skip
    assert fires.calls == [(name, tomorrow)]


def test_a_jitter_longer_than_the_period_fires_each_slot_once_in_order_none_late(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """Every 2 s with a jitter of 5 s (grace 5 s): a slot is queued once the one before
    it fires, so a slot due before the one ahead of it fires right after it, within
    its grace; none fires before it is due, none is left out."""
    schedule = {"every": "2s", "jitter": "5s", "grace": "5s"}
    name = "fast"
    apply_paths(plans_factory, [plan_files({"p.yaml": [swap_plan(name, schedule=schedule)]})],
                now=MIDNIGHT - timedelta(seconds=20))  # fmt: skip
    parsed = parse_schedule(schedule)
    scheduler, _clock, fires = start_before_midnight(plans_factory, started)

    assert fires.wait_for(lambda: len(fires.calls) >= 6, timeout=30)
    scheduler.stop(wait=True)
    # (two slots due at once may run side by side: their order of return is not theirs)
    fired = sorted(slot for _, slot in fires.calls)
    # from the first one (caught up at the start), each slot once, none left out
    slots = next_fire_times(parsed, fired[0] - timedelta(microseconds=1), len(fired))
    assert fired == slots
    for slot in slots:
        due = slot + jitter_delay(parsed, name, slot)
        assert due <= fires.at[(name, slot)]
        assert fires.at[(name, slot)] - due <= timedelta(seconds=parsed.grace)
    rows = {slot: status for slot, status, _ in run_rows(plans_factory)}
    assert all(rows[slot] == "succeeded" for slot in slots)
