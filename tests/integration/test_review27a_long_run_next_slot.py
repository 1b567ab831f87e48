"""A run that lasts longer than the window's refill step (review 27a).

When a slot fires, the plan's next slot is queued (`Scheduler._queue_after`): live in
the window if a page has read past it already, else written to the store
(``plans.next_fire``) for a later page to find. It is written only once the fire
is back (`_flush` holds back the plans in flight: their slot may still lack a row),
and a run is the whole of `fire` (order, check, sign, submit, confirm: seconds to a
minute). Meanwhile the window goes on reading pages, each after the last one's
cursor: a next slot written behind the cursor is never read, and the plan never
fires again (no row, no log line) until a reload or a restart.

An ``every: 1m`` plan whose run takes 40 s must still fire its next slot, a minute
after the first.

Real SQLite file and the PostgreSQL fixture, the real scheduler; its clock is a
parameter the test moves on (the run's 40 s are a step of the clock).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import Scheduler
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import MovableClock as Clock
from tests.fixtures.scheduler import Timed, run_rows
from tests.support.wait import wait_until

NINE = datetime(2026, 3, 2, 9, tzinfo=UTC)
RUN = timedelta(seconds=40)  # how long the first run takes


class SlowFirst(Timed):
    """The first fire takes `RUN`: the clock moves on by it, and the scheduler's timer
    turns (reading pages) before the fire is back, as it does during a real run."""

    def __init__(self, factory: sessionmaker[Session], clock: Clock) -> None:
        super().__init__(factory, clock)
        self.moving = clock
        self.scheduler: Scheduler | None = None
        self.first = threading.Event()

    def __call__(self, plan: PlanRecord, slot: datetime) -> None:
        super().__call__(plan, slot)
        if self.first.is_set():
            return
        self.first.set()
        assert self.scheduler is not None
        scheduler = self.scheduler
        self.moving.move_to(slot + RUN)
        scheduler._arm()
        # the timer reads on while this run is under way: its cursor passes the hour's
        # next page (up to a minute ahead of the clock)
        assert wait_until(lambda: _cursor_past(scheduler, slot + RUN + timedelta(seconds=30)),
                          timeout=10)  # fmt: skip


def _cursor_past(scheduler: Scheduler, moment: datetime) -> bool:
    cursor = scheduler._window.cursor
    return cursor is not None and cursor[0] >= moment


@pytest.mark.parametrize("schedule", [{"every": "1m"}, {"cron": "* * * * *"}])
def test_the_next_slot_of_a_plan_whose_run_outlasts_a_refill_still_fires(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler],
    schedule: dict[str, str],
) -> None:  # fmt: skip
    plan = swap_plan("minutely", schedule=schedule)
    apply_paths(plans_factory, [plan_files({"p.yaml": [plan]})],
                now=NINE - timedelta(seconds=30))  # fmt: skip
    clock = Clock(NINE - timedelta(seconds=2))
    fires = SlowFirst(plans_factory, clock)
    scheduler = Scheduler(plans_factory, fires, poll_interval=3600, clock=clock)
    fires.scheduler = scheduler
    started.append(scheduler)
    scheduler.start()
    assert fires.wait_for(lambda: bool(fires.calls), timeout=15), run_rows(plans_factory)
    assert wait_until(lambda: scheduler.busy() == 0, timeout=15)

    following = NINE + timedelta(minutes=1)
    clock.move_to(following - timedelta(seconds=2))
    scheduler._arm()

    assert fires.wait_for(lambda: (("minutely", following) in fires.calls), timeout=15), (
        fires.calls, scheduler.next_fires(), run_rows(plans_factory))  # fmt: skip
    assert fires.calls[:2] == [("minutely", NINE), ("minutely", following)]
