"""Jittered slots across a restart (review 18g).

A jittered slot is due at slot + jitter (`is_late` counts the grace from there). A
daemon back after a short stop, while such a slot still waits out its jitter, must
fire it when it is due, as a daemon that never stopped would: not record it as
``missed: daemon was down`` (``misfire: skip``), nor fire it at once, hours early
(``misfire: run-once``). With a jitter longer than the period the same holds for
each slot not yet due, and the slots already due are settled as before.

Real SQLite file and the PostgreSQL fixture, the real scheduler; its clock is a
parameter that the test can move on (no waiting for a jitter of hours).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.schedule import jitter_delay, next_fire_times, parse_schedule
from jupcron.scheduling.scheduler import Scheduler
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import MovableClock as Clock
from tests.fixtures.scheduler import Timed, run_rows
from tests.fixtures.scheduler import jittered_name as named

MIDNIGHT = datetime(2026, 3, 2, tzinfo=UTC)


@pytest.mark.parametrize("misfire", ["skip", "run-once"])
def test_a_restart_while_a_slot_waits_out_its_jitter_fires_it_when_due(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler],
    misfire: str,
) -> None:  # fmt: skip
    schedule = {"cron": "0 0 * * *", "jitter": "12h", "grace": "12h", "misfire": misfire}
    name, delay = named(schedule, MIDNIGHT, timedelta(hours=1))
    apply_paths(plans_factory, [plan_files({"p.yaml": [swap_plan(name, schedule=schedule)]})],
                now=MIDNIGHT - timedelta(hours=1))  # fmt: skip
    due = MIDNIGHT + delay
    # the daemon was down from before midnight; it is back 3 s before the slot is due
    clock = Clock(due - timedelta(seconds=3))
    fires = Timed(plans_factory, clock)
    scheduler = Scheduler(plans_factory, fires, poll_interval=3600, clock=clock)
    started.append(scheduler)

    scheduler.start()

    assert fires.wait_for(lambda: bool(fires.calls), timeout=15), run_rows(plans_factory)
    assert fires.calls == [(name, MIDNIGHT)]
    assert fires.at[(name, MIDNIGHT)] >= due  # not before it was due
    assert [(slot, status) for slot, status, _ in run_rows(plans_factory)] == [
        (MIDNIGHT, "succeeded")
    ]


def test_a_restart_with_a_jitter_longer_than_the_period_settles_due_slots_and_waits_for_the_rest(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    """Hourly, jitter 3 h, ``skip``: at the start, slots already due are missed (the
    daemon was down), a slot not yet due fires when due, and no slot is lost."""
    schedule = {"every": "1h", "jitter": "3h", "grace": "3h", "misfire": "skip"}
    parsed = parse_schedule(schedule)
    name, _ = named(schedule, MIDNIGHT, timedelta(0))
    slots = next_fire_times(parsed, MIDNIGHT - timedelta(seconds=1), 4)  # 00:00 .. 03:00
    dues = {s: s + jitter_delay(parsed, name, s) for s in slots}
    # back at 03:00 + 1 s: slots due by then are missed; the first not yet due waits
    back = slots[-1] + timedelta(seconds=1)
    waiting = [s for s in slots if dues[s] > back]
    if not waiting or min(dues[s] for s in waiting) - back > timedelta(hours=2):
        pytest.skip("this name's jitter leaves no slot waiting soon enough")
    apply_paths(plans_factory, [plan_files({"p.yaml": [swap_plan(name, schedule=schedule)]})],
                now=MIDNIGHT - timedelta(hours=1))  # fmt: skip
    first = waiting[0]
    clock = Clock(back)
    fires = Timed(plans_factory, clock)
    scheduler = Scheduler(plans_factory, fires, poll_interval=3600, clock=clock)
    started.append(scheduler)
    scheduler.start()
    # nothing fires before the first waiting slot is due; then move to 2 s before it
    assert not fires.wait_for(lambda: bool(fires.calls), timeout=1)
    clock.move_to(dues[first] - timedelta(seconds=2))
    scheduler._arm()
    assert fires.wait_for(lambda: (name, first) in fires.calls, timeout=15), run_rows(plans_factory)
    assert fires.at[(name, first)] >= dues[first]
    rows = {slot: status for slot, status, _ in run_rows(plans_factory)}
    for slot in slots:
        if slot < first:
            assert rows.get(slot) == ("skipped" if dues[slot] <= back else "succeeded"), slot
    assert rows[first] == "succeeded"
