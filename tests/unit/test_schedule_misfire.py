"""Misfire policy: what happens to fire times that passed while the daemon was down."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jupcron.scheduling.catchup import MAX_SKIPPED, catch_up
from jupcron.scheduling.schedule import parse_schedule

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def hourly(misfire: str, grace: str = "5m") -> dict[str, str]:
    return {"every": "1h", "misfire": misfire, "grace": grace}


@pytest.mark.parametrize(
    ("misfire", "run", "skipped"),
    [
        # down from 09:30 to 12:02 across 10:00, 11:00, 12:00 (last ran 09:00)
        ("run-once", T0 + timedelta(hours=3), [T0 + timedelta(hours=1), T0 + timedelta(hours=2)]),
        ("skip", None, [T0 + timedelta(hours=h) for h in (1, 2, 3)]),
    ],
)
def test_down_across_three_fire_times(
    misfire: str, run: datetime | None, skipped: list[datetime]
) -> None:
    schedule = parse_schedule(hourly(misfire))
    now = T0 + timedelta(hours=3, minutes=2)
    result = catch_up(schedule, last_slot=T0, since=T0 - timedelta(days=1), now=now)
    assert result.run == run
    assert result.skipped == skipped
    assert not result.truncated


def test_run_once_beyond_grace_runs_nothing() -> None:
    schedule = parse_schedule(hourly("run-once", grace="5m"))
    now = T0 + timedelta(hours=3, minutes=6)
    result = catch_up(schedule, last_slot=T0, since=T0, now=now)
    assert result.run is None
    assert len(result.skipped) == 3


def test_nothing_missed() -> None:
    schedule = parse_schedule(hourly("skip"))
    result = catch_up(schedule, last_slot=T0, since=T0, now=T0 + timedelta(minutes=59))
    assert result.run is None
    assert result.skipped == []


def test_slots_before_the_plan_existed_are_not_missed() -> None:
    schedule = parse_schedule(hourly("skip"))
    since = T0 + timedelta(hours=2, minutes=30)  # plan applied at 11:30
    result = catch_up(schedule, last_slot=None, since=since, now=T0 + timedelta(hours=3, minutes=1))
    assert result.skipped == [T0 + timedelta(hours=3)]


def test_at_in_the_past_runs_once_within_grace_else_skipped() -> None:
    schedule = parse_schedule({"at": "2024-05-01T09:00:00Z"})
    early = catch_up(schedule, None, since=T0 - timedelta(hours=1), now=T0 + timedelta(minutes=3))
    assert early.run == T0
    assert early.skipped == []
    late = catch_up(schedule, None, since=T0 - timedelta(hours=1), now=T0 + timedelta(hours=1))
    assert late.run is None
    assert late.skipped == [T0]
    # already claimed: nothing again
    done = catch_up(schedule, T0, since=T0 - timedelta(hours=1), now=T0 + timedelta(hours=1))
    assert done.run is None
    assert done.skipped == []


def test_long_outage_is_bounded() -> None:
    schedule = parse_schedule({"every": "1m", "misfire": "skip"})
    result = catch_up(schedule, None, since=T0 - timedelta(days=400), now=T0)
    assert len(result.skipped) == MAX_SKIPPED
    assert result.skipped[-1] == T0
    assert result.truncated
