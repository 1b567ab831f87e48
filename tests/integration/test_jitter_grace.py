"""A jittered run's grace is counted from when it was due (its slot plus the plan's
stable jitter), as the scheduler counts it (`is_late`), not from the bare slot.

A plan may have a jitter as long as its grace (`parse_schedule` allows jitter <=
grace). The scheduler fires such a slot at slot + jitter and calls it late only
`grace` seconds after that. The runner's own grace (recovery of a run interrupted
before signing, the fresh order after an execute that cannot land, a signed run
that expired unposted) was counted from the bare slot: a run due at slot + 290 s
with a 300 s grace had 10 s left. A daemon restarted 30 s after the run started,
or a failover that took the run over once it went stale (15 s), recorded the
on-time run as skipped ("the slot's grace period has passed").

Real SQLite store, the emulator, real signed transactions; the runner's clock is
set, so nothing depends on the wall clock.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from jupcron.scheduling.schedule import jitter_delay, next_fire_times, parse_schedule
from tests.fixtures.runner import Clock, RigFactory

GRACE = 300
SCHEDULE = {"every": "1h", "jitter": GRACE, "grace": GRACE}
NAME = "jittered-swap"
# a slot a day ahead of the wall clock, whatever the day (the clock is the rig's)
START = (datetime.now(UTC) + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)


@pytest.fixture(autouse=True)
def _disarm() -> Iterator[None]:
    yield
    failpoints.disarm()


def late_jittered_slot() -> tuple[datetime, timedelta]:
    """A slot whose stable jitter for `NAME` is most of the grace, and that jitter."""
    schedule = parse_schedule(SCHEDULE)
    for slot in next_fire_times(schedule, START, 500):
        delay = jitter_delay(schedule, NAME, slot)
        if delay >= timedelta(seconds=GRACE - 60):
            return slot, delay
    raise AssertionError("no slot with a long jitter among 500")


@pytest.mark.parametrize("point", ["after_claim", "after_requested"])
def test_a_run_interrupted_soon_after_its_jittered_start_is_ordered_again(
    make_rig: RigFactory, point: str
) -> None:
    slot, delay = late_jittered_slot()
    clock = Clock(slot + delay)  # the scheduler fires it when due: slot + jitter
    rig = make_rig(clock=clock)
    plan = rig.plan("swap", name=NAME, schedule=SCHEDULE)
    failpoints.arm(point)
    with pytest.raises(failpoints.SimulatedCrash):
        rig.runner().fire(plan, slot)
    clock.advance(90)  # restarted 90 s after the run was due: well inside its grace

    outcomes = recover(rig.runner(), startup=True)

    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED], outcomes
    assert len(rig.landed()) == 1


def test_a_jittered_run_past_its_grace_from_when_it_was_due_is_still_skipped(
    make_rig: RigFactory,
) -> None:
    slot, delay = late_jittered_slot()
    clock = Clock(slot + delay)
    rig = make_rig(clock=clock)
    plan = rig.plan("swap", name=NAME, schedule=SCHEDULE)
    failpoints.arm("after_requested")
    with pytest.raises(failpoints.SimulatedCrash):
        rig.runner().fire(plan, slot)
    clock.advance(GRACE + 1)  # past the grace, counted from when it was due

    outcomes = recover(rig.runner(), startup=True)

    assert [o.status for o in outcomes] == [RunStatus.SKIPPED]
    assert rig.landed() == []
    assert rig.issued() == 1  # the interrupted order only: nothing ordered afresh


def test_a_manual_fire_of_a_jittered_plan_keeps_its_grace_from_when_it_was_fired(
    make_rig: RigFactory,
) -> None:
    """`jupcron fire` has no jitter: its grace is counted from the moment it was fired."""
    from jupcron.runner.ports import RunOptions

    slot, _ = late_jittered_slot()
    clock = Clock(slot)
    rig = make_rig(clock=clock)
    plan = rig.plan("swap", name=NAME, schedule=SCHEDULE)
    failpoints.arm("after_requested")
    with pytest.raises(failpoints.SimulatedCrash):
        rig.runner().fire(plan, slot, RunOptions(trigger="manual"))
    clock.advance(GRACE + 1)

    outcomes = recover(rig.runner(), startup=True)

    assert [o.status for o in outcomes] == [RunStatus.SKIPPED]
    assert rig.landed() == []
