"""The start's catch-up lists only about the newest `MAX_SKIPPED` missed slots (back
from `now`), and the slots within the jitter of `now` on their own, up to the first
still waiting. Before, `catch_up` listed every slot of its 31-day look-back, then
kept the newest 1,000: 2.7 million datetimes for an ``every: 1s`` plan (864,000
after a 10-day outage), built with the scheduler's lock held at every start.

Its answer is unchanged: `_listed_all` below is the catch-up as it was (every slot
listed), compared on a table of schedules, outages and jitters."""

from __future__ import annotations

import bisect
import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jupcron.scheduling.catchup import MAX_LOOKBACK, MAX_SKIPPED, CatchUp, catch_up
from jupcron.scheduling.schedule import (
    Misfire,
    Schedule,
    aware,
    fire_times_between,
    is_late,
    jitter_delay,
    next_fire_times,
    parse_schedule,
)

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
NAME = "fast"
PEAK_BYTES = 8_000_000  # 864,000 datetimes in a list take ~50 MB


def _listed_all(
    schedule: Schedule, last_slot: datetime | None, since: datetime, now: datetime,
    key: str | None,
) -> CatchUp:  # fmt: skip
    """The catch-up before: every slot in the look-back listed."""
    now = aware(now)
    lower = aware(since)
    if last_slot is not None and aware(last_slot) > lower:
        lower = aware(last_slot)
    floor = now - MAX_LOOKBACK
    truncated = False
    if lower < floor:
        first = next_fire_times(schedule, lower, 1)
        truncated = bool(first) and first[0] <= floor
        lower = floor
    missed = fire_times_between(schedule, lower, now)
    waiting = None
    if schedule.jitter > 0 and key is not None:
        start = bisect.bisect_right(missed, now - timedelta(seconds=schedule.jitter))
        for i in range(start, len(missed)):
            if missed[i] + jitter_delay(schedule, key, missed[i]) > now:
                missed, waiting = missed[:i], missed[i]
                break
    run = None
    if (
        schedule.misfire == Misfire.RUN_ONCE
        and missed
        and not is_late(schedule, key, missed[-1], now)
    ):
        run = missed.pop()
    if len(missed) > MAX_SKIPPED:
        truncated = True
        missed = missed[-MAX_SKIPPED:]
    return CatchUp(run=run, skipped=missed, truncated=truncated, waiting=waiting)


def schedule_of(**data: Any) -> Schedule:
    return parse_schedule(data)


SECONDLY = {"every": "1s"}
CASES: list[tuple[str, dict[str, Any], timedelta, timedelta]] = [
    # (id, schedule, outage (last slot .. now), how long the plan has been active)
    ("1s-2d", SECONDLY, timedelta(days=2, milliseconds=500), timedelta(days=3)),
    ("10s-40d", {"every": "10s"}, timedelta(days=40), timedelta(days=41)),
    ("1s-999s", SECONDLY, timedelta(seconds=999), timedelta(days=1)),
    ("1s-1000s", SECONDLY, timedelta(seconds=1000), timedelta(days=1)),
    ("1s-1001s", SECONDLY, timedelta(seconds=1001), timedelta(days=1)),
    ("1s-1002s", SECONDLY, timedelta(seconds=1002), timedelta(days=1)),
    ("1s-skip", {**SECONDLY, "misfire": "skip"}, timedelta(hours=5), timedelta(days=1)),
    ("1s-since", SECONDLY, timedelta(days=5), timedelta(seconds=1500)),
    (
        "7s-start",
        {"every": "7s", "start": "2025-03-01T00:00:03Z"},
        timedelta(days=3),
        timedelta(days=9),
    ),
    (
        "1s-ended",
        {**SECONDLY, "end": "2025-03-04T09:00:00Z"},
        timedelta(days=9),
        timedelta(days=10),
    ),
    ("cron-min", {"cron": "* * * * *"}, timedelta(days=40), timedelta(days=50)),
    (
        "cron-hour-dst",
        {"cron": "30 * * * *", "timezone": "America/New_York"},
        timedelta(days=70),
        timedelta(days=90),
    ),
    (
        "cron-night",
        {"cron": "0 2 * * *", "timezone": "Europe/Berlin"},
        timedelta(days=60),
        timedelta(days=90),
    ),
    ("at", {"at": "2025-03-02T10:00:00Z"}, timedelta(days=3), timedelta(days=5)),
    ("1h-late", {"every": "1h", "grace": "5m"}, timedelta(days=2, minutes=20), timedelta(days=3)),
    # jitter: the slots within it of now may be waiting (the first such is the next)
    ("1s-jitter", {**SECONDLY, "jitter": "60s"}, timedelta(days=2), timedelta(days=3)),
    (
        "1s-jitter-skip",
        {**SECONDLY, "jitter": "30s", "misfire": "skip"},
        timedelta(days=3),
        timedelta(days=4),
    ),
    (
        "1s-jitter-long",
        {**SECONDLY, "jitter": "2h", "grace": "3h"},
        timedelta(days=2),
        timedelta(days=3),
    ),
    (
        "1s-jitter-short-outage",
        {**SECONDLY, "jitter": "2h", "grace": "3h"},
        timedelta(minutes=20),
        timedelta(days=3),
    ),
    (
        "1m-jitter",
        {"every": "1m", "jitter": "10m", "grace": "10m"},
        timedelta(days=35),
        timedelta(days=40),
    ),
    ("cron-jitter", {"cron": "*/5 * * * *", "jitter": "4m"}, timedelta(days=8), timedelta(days=9)),
]


@pytest.mark.parametrize("key", [NAME, None])
@pytest.mark.parametrize(
    ("data", "outage", "active"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("shift", [timedelta(0), timedelta(milliseconds=1_500),
                                   timedelta(seconds=37)])  # fmt: skip
def test_the_answer_is_the_one_of_every_slot_listed(
    data: dict[str, Any], outage: timedelta, active: timedelta, key: str | None,
    shift: timedelta,
) -> None:  # fmt: skip
    schedule = schedule_of(**data)
    now = T0 + outage + shift
    last = T0 + shift if "at" not in data else None
    since = now - active
    assert catch_up(schedule, last, since, now, key=key) == _listed_all(
        schedule, last, since, now, key
    )


def test_a_ten_day_outage_of_an_every_second_plan_is_not_all_listed() -> None:
    schedule = schedule_of(every="1s")
    now = T0 + timedelta(days=10, milliseconds=500)
    tracemalloc.start()
    try:
        result = catch_up(schedule, T0, T0 - timedelta(days=1), now, key=NAME)
        used = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert used < PEAK_BYTES, f"{used:,} bytes: every slot of ten days listed"
    newest = T0 + timedelta(days=10)
    assert result.run == newest
    assert result.skipped == [newest - (MAX_SKIPPED - i) * timedelta(seconds=1)
                              for i in range(MAX_SKIPPED)]  # fmt: skip
    assert (result.truncated, result.waiting) == (True, None)


def test_a_month_of_jitter_is_not_all_listed_either() -> None:
    """Jitter up to the grace is allowed: the slots within it are hashed one by one,
    up to the first still waiting, the newest of those before it kept."""
    schedule = schedule_of(every="1s", jitter="40d", grace="40d")
    now = T0 + timedelta(days=10)
    tracemalloc.start()
    try:
        result = catch_up(schedule, T0, T0 - timedelta(days=1), now, key=NAME)
        used = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert used < PEAK_BYTES, f"{used:,} bytes: every slot within the jitter listed"
    assert result == _listed_all(schedule, T0, T0 - timedelta(days=1), now, NAME)


def test_more_due_slots_within_the_jitter_than_are_kept() -> None:
    """Jitter of 20 days: the first 1,001 slots within it of `now` (20 days old) all
    due (for this key), so none from before them is listed, and still truncated."""
    schedule = schedule_of(every="1s", jitter="20d", grace="20d")
    now = T0 + timedelta(days=25)
    window = next_fire_times(schedule, now - timedelta(days=20), MAX_SKIPPED + 2)
    key = next(f"p{i}" for i in range(1000)
               if all(s + jitter_delay(schedule, f"p{i}", s) <= now for s in window))  # fmt: skip
    result = catch_up(schedule, T0, T0 - timedelta(days=1), now, key=key)
    assert result == _listed_all(schedule, T0, T0 - timedelta(days=1), now, key)
    assert result.truncated
