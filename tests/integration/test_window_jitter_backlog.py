"""The scheduler's window at scale, with jitter (review 18g).

An entry stays in the window from its slot until it is due (slot + jitter), and the
window holds at most `CAPACITY` entries. Pages are read in slot order: once more
than `CAPACITY` plans have passed their slot and still wait out a long jitter, a
window bounded by slots fills with them and reads no further page, so a plan due
sooner (no jitter, a later slot) is never read, fires past its grace and is
recorded as missed: a run that silently never happened. The window must let an
entry due sooner in, whatever waits behind its jitter.

Real SQLite file and the PostgreSQL fixture, the real scheduler, its clock a
parameter (no waiting for the jittered entries' due times).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling import window as win
from jupcron.scheduling.schedule import jitter_delay, parse_schedule
from jupcron.scheduling.scheduler import Scheduler
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import Fires, clock_at, run_rows

MIDNIGHT = datetime(2026, 3, 2, tzinfo=UTC)
JITTERED = {"cron": "0 0 * * *", "jitter": "12h", "grace": "12h"}


def long_jitter_names(count: int, at_least: timedelta) -> list[str]:
    """Plan names whose stable jitter at MIDNIGHT is at least `at_least` (none of them
    is due while the test runs)."""
    schedule = parse_schedule(JITTERED)
    names: list[str] = []
    i = 0
    while len(names) < count:
        name = f"j{i:05d}"
        if jitter_delay(schedule, name, MIDNIGHT) >= at_least:
            names.append(name)
        i += 1
    return names


def jittered_plan(name: str) -> dict[str, Any]:
    return swap_plan(name, schedule=dict(JITTERED))


def test_a_plan_due_sooner_is_not_kept_out_by_more_than_a_window_of_jittered_ones(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    # more daily plans than the window holds pass their slot at midnight and wait out
    # a jitter of an hour or more; one plan without jitter is due 5 s after midnight
    names = long_jitter_names(win.CAPACITY + 200, timedelta(hours=1))
    plain_at = MIDNIGHT + timedelta(seconds=5)
    plans = [jittered_plan(n) for n in names]
    plans.append(swap_plan("plain", schedule={"at": plain_at.isoformat()}))  # grace 5 min
    files = {f"p{i}.yaml": plans[i : i + 2000] for i in range(0, len(plans), 2000)}
    apply_paths(plans_factory, [plan_files(files)], now=MIDNIGHT - timedelta(hours=1))
    fires = Fires(plans_factory)
    scheduler = Scheduler(plans_factory, fires, poll_interval=3600,
                          clock=clock_at(MIDNIGHT - timedelta(seconds=2)))  # fmt: skip
    started.append(scheduler)

    scheduler.start()

    fired = fires.wait_for(lambda: ("plain", plain_at) in fires.calls, timeout=20)
    assert fired, ("the plan due sooner was never read", run_rows(plans_factory)[-3:])
    assert fires.calls == [("plain", plain_at)]  # no jittered plan fired before it was due
    assert len(scheduler._window.live) <= win.CAPACITY
