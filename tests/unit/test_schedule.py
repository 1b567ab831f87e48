"""Fire-time maths: tables of cases, time passed in (no clock, no sleeps)."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jupcron.scheduling.schedule import (
    Misfire,
    Schedule,
    fire_times_between,
    format_duration,
    is_late,
    jitter_delay,
    next_fire_times,
    parse_duration,
    parse_schedule,
)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def local(values: list[datetime], schedule: Schedule) -> list[str]:
    return [v.astimezone(schedule.tz).isoformat() for v in values]


# --- cron across both DST changes -------------------------------------------------------------
# Berlin: 2024-03-31 02:00 CET -> 03:00 CEST (02:xx does not exist)
#         2024-10-27 03:00 CEST -> 02:00 CET  (02:xx happens twice)
# New York: 2024-03-10 02:00 EST -> 03:00 EDT; 2024-11-03 02:00 EDT -> 01:00 EST
DST_CASES: list[tuple[str, str, str, list[str]]] = [
    (
        "berlin daily 09:00 across spring change: same wall time, 23h apart",
        "0 9 * * *",
        "Europe/Berlin",
        [
            "2024-03-30T09:00:00+01:00",
            "2024-03-31T09:00:00+02:00",
            "2024-04-01T09:00:00+02:00",
        ],
    ),
    (
        "berlin daily 02:30 in the missing hour: shifted to 03:30, not skipped",
        "30 2 * * *",
        "Europe/Berlin",
        [
            "2024-03-30T02:30:00+01:00",
            "2024-03-31T03:30:00+02:00",
            "2024-04-01T02:30:00+02:00",
        ],
    ),
    (
        "berlin daily 02:30 in the repeated hour: once, at the first occurrence",
        "30 2 * * *",
        "Europe/Berlin",
        [
            "2024-10-26T02:30:00+02:00",
            "2024-10-27T02:30:00+02:00",
            "2024-10-28T02:30:00+01:00",
        ],
    ),
    (
        "new york daily 02:30 in the missing hour: shifted to 03:30",
        "30 2 * * *",
        "America/New_York",
        [
            "2024-03-09T02:30:00-05:00",
            "2024-03-10T03:30:00-04:00",
            "2024-03-11T02:30:00-04:00",
        ],
    ),
    (
        "new york daily 01:30 in the repeated hour: once, first occurrence (EDT)",
        "30 1 * * *",
        "America/New_York",
        [
            "2024-11-02T01:30:00-04:00",
            "2024-11-03T01:30:00-04:00",
            "2024-11-04T01:30:00-05:00",
        ],
    ),
    (
        "new york weekdays 09:00 across the autumn change",
        "0 9 * * MON-FRI",
        "America/New_York",
        [
            "2024-11-01T09:00:00-04:00",
            "2024-11-04T09:00:00-05:00",
            "2024-11-05T09:00:00-05:00",
        ],
    ),
]


@pytest.mark.parametrize(
    ("title", "cron", "tz", "expected"), DST_CASES, ids=[c[0] for c in DST_CASES]
)
def test_cron_daily_across_dst(title: str, cron: str, tz: str, expected: list[str]) -> None:
    schedule = parse_schedule({"cron": cron, "timezone": tz})
    first = datetime.fromisoformat(expected[0])
    after = first - timedelta(minutes=1)
    assert local(next_fire_times(schedule, after, len(expected)), schedule) == expected


HOURLY_CASES = [
    # (tz, window start UTC, window end UTC, expected local fire times)
    (
        "Europe/Berlin",
        "2024-03-31T00:00:00+00:00",
        "2024-03-31T02:30:00+00:00",
        # 01:30 CET, then 03:30 CEST (02:30 does not exist: merged into 03:30)
        ["2024-03-31T01:30:00+01:00", "2024-03-31T03:30:00+02:00", "2024-03-31T04:30:00+02:00"],
    ),
    (
        "Europe/Berlin",
        "2024-10-26T23:00:00+00:00",
        "2024-10-27T02:30:00+00:00",
        # hour field '*': the repeated 02:30 fires twice: still one fire per real hour
        [
            "2024-10-27T01:30:00+02:00",
            "2024-10-27T02:30:00+02:00",
            "2024-10-27T02:30:00+01:00",
            "2024-10-27T03:30:00+01:00",
        ],
    ),
    (
        "America/New_York",
        "2024-11-03T04:00:00+00:00",
        "2024-11-03T07:30:00+00:00",
        [
            "2024-11-03T00:30:00-04:00",
            "2024-11-03T01:30:00-04:00",
            "2024-11-03T01:30:00-05:00",
            "2024-11-03T02:30:00-05:00",
        ],
    ),
]


@pytest.mark.parametrize(("tz", "start", "end", "expected"), HOURLY_CASES)
def test_cron_hourly_across_dst_one_fire_per_real_hour(
    tz: str, start: str, end: str, expected: list[str]
) -> None:
    schedule = parse_schedule({"cron": "30 * * * *", "timezone": tz})
    got = fire_times_between(schedule, utc(start), utc(end))
    assert local(got, schedule) == expected
    gaps = {b - a for a, b in itertools.pairwise(got)}
    assert gaps == {timedelta(hours=1)}


@pytest.mark.parametrize(
    ("tz", "year"),
    [("Europe/Berlin", 2024), ("America/New_York", 2024), ("Europe/Berlin", 2025)],
)
def test_daily_cron_fires_exactly_once_every_local_day_of_the_year(tz: str, year: int) -> None:
    for cron in ("30 2 * * *", "30 1 * * *", "0 0 * * *", "59 23 * * *"):
        schedule = parse_schedule({"cron": cron, "timezone": tz})
        start = datetime(year, 1, 1, tzinfo=schedule.tz)
        end = datetime(year + 1, 1, 1, tzinfo=schedule.tz)
        fires = fire_times_between(
            schedule, start - timedelta(microseconds=1), end - timedelta(microseconds=1)
        )
        days = [f.astimezone(schedule.tz).date() for f in fires]
        assert len(days) == len(set(days)) == (end.date() - start.date()).days, cron


def test_every_is_elapsed_time_across_dst() -> None:
    schedule = parse_schedule({"every": "6h", "timezone": "Europe/Berlin"})
    got = fire_times_between(schedule, utc("2024-03-30T20:00:00Z"), utc("2024-03-31T20:00:00Z"))
    assert [g.isoformat() for g in got] == [
        "2024-03-31T00:00:00+00:00",
        "2024-03-31T06:00:00+00:00",
        "2024-03-31T12:00:00+00:00",
        "2024-03-31T18:00:00+00:00",
    ]
    # the wall clock moves by the DST hour; real time does not
    assert local(got[:2], schedule) == ["2024-03-31T01:00:00+01:00", "2024-03-31T08:00:00+02:00"]


@pytest.mark.parametrize(
    ("every", "start", "after", "expected"),
    [
        ("90s", None, "2024-01-01T00:00:00Z", ["2024-01-01T00:01:30", "2024-01-01T00:03:00"]),
        ("15m", None, "2024-01-01T00:14:59Z", ["2024-01-01T00:15:00", "2024-01-01T00:30:00"]),
        ("1d", None, "2024-10-26T12:00:00Z", ["2024-10-27T00:00:00", "2024-10-28T00:00:00"]),
        # anchored on start, and nothing before it
        (
            "1h",
            "2024-01-01T00:20:00Z",
            "2023-12-01T00:00:00Z",
            ["2024-01-01T00:20:00", "2024-01-01T01:20:00"],
        ),
        (
            "1h",
            "2024-01-01T00:20:00Z",
            "2024-01-01T00:20:00Z",
            ["2024-01-01T01:20:00", "2024-01-01T02:20:00"],
        ),
    ],
)
def test_every_slots(every: str, start: str | None, after: str, expected: list[str]) -> None:
    data: dict[str, Any] = {"every": every}
    if start:
        data["start"] = start
    schedule = parse_schedule(data)
    got = next_fire_times(schedule, utc(after), 2)
    assert [g.replace(tzinfo=None).isoformat() for g in got] == expected


def test_at_in_the_future_fires_once_and_in_the_past_never() -> None:
    schedule = parse_schedule({"at": "2026-12-01T01:00:00+01:00"})
    assert next_fire_times(schedule, utc("2026-11-01T00:00:00Z"), 3) == [
        utc("2026-12-01T00:00:00Z")
    ]
    assert next_fire_times(schedule, utc("2026-12-01T00:00:00Z"), 3) == []
    assert next_fire_times(schedule, utc("2027-01-01T00:00:00Z"), 3) == []


def test_start_end_window() -> None:
    schedule = parse_schedule(
        {
            "cron": "0 12 * * *",
            "start": "2024-05-03T00:00:00Z",
            "end": "2024-05-05T12:00:00Z",
        }
    )
    got = next_fire_times(schedule, utc("2024-05-01T00:00:00Z"), 10)
    assert [g.date().isoformat() for g in got] == ["2024-05-03", "2024-05-04", "2024-05-05"]
    assert next_fire_times(schedule, utc("2024-05-05T12:00:00Z"), 1) == []
    at = parse_schedule({"at": "2024-06-01T00:00:00Z", "end": "2024-05-31T00:00:00Z"})
    assert next_fire_times(at, utc("2024-01-01T00:00:00Z"), 1) == []


@pytest.mark.parametrize(
    ("cron", "after", "expected"),
    [
        ("0 9 * * MON", "2024-05-01T00:00:00Z", ["2024-05-06T09:00", "2024-05-13T09:00"]),
        ("*/20 8-9 * * *", "2024-05-01T08:30:00Z", ["2024-05-01T08:40", "2024-05-01T09:00"]),
        ("0 0 29 2 *", "2024-03-01T00:00:00Z", ["2028-02-29T00:00", "2032-02-29T00:00"]),
        # both day fields restricted: either matches (1st of month OR a Sunday)
        ("0 0 1 * SUN", "2024-06-01T00:00:00Z", ["2024-06-02T00:00", "2024-06-09T00:00"]),
        ("0 0 1 * 7", "2024-06-29T00:00:00Z", ["2024-06-30T00:00", "2024-07-01T00:00"]),
        ("@monthly", "2024-01-15T00:00:00Z", ["2024-02-01T00:00", "2024-03-01T00:00"]),
        ("0 6 * JAN,jul *", "2024-01-31T06:00:00Z", ["2024-07-01T06:00", "2024-07-02T06:00"]),
        ("5/30 * * * *", "2024-01-01T00:00:00Z", ["2024-01-01T00:05", "2024-01-01T00:35"]),
    ],
)
def test_cron_fields(cron: str, after: str, expected: list[str]) -> None:
    schedule = parse_schedule({"cron": cron})
    got = next_fire_times(schedule, utc(after), 2)
    assert [g.strftime("%Y-%m-%dT%H:%M") for g in got] == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"cron": "0 9 * *"}, "cron needs 5 fields"),
        ({"cron": "61 * * * *"}, "minute: 61 is outside 0-59"),
        ({"cron": "0 9 * * FUNDAY"}, "day of week: 'FUNDAY' is not a number"),
        ({"cron": "0 5-2 * * *"}, "goes backwards"),
        ({"cron": "*/0 * * * *"}, "step '0' must be a positive number"),
        ({"cron": "0 0 30 2 *"}, "never fires"),
        ({"cron": "@sometimes"}, "unknown cron alias"),
        ({"every": "0s"}, "every must be greater than 0"),
        ({"every": "fast"}, "must be like 90s"),
        ({"every": "1.5h"}, "must be like 90s"),
        ({"at": "2026-12-01T00:00:00"}, "needs an offset"),
        ({"at": "tomorrow"}, "not an ISO 8601 time"),
        (
            {"cron": "0 9 * * *", "every": "1h"},
            "exactly one of cron, every, at (found: cron, every)",
        ),
        ({}, "exactly one of cron, every, at (found: none)"),
        ({"every": "1h", "timezone": "Mars/Olympus"}, "unknown timezone 'Mars/Olympus'"),
        ({"every": "1h", "timezone": "../../etc/passwd"}, "unknown timezone"),
        (
            {"every": "1h", "start": "2024-01-02T00:00:00Z", "end": "2024-01-01T00:00:00Z"},
            "end must be after start",
        ),
        ({"every": "1h", "misfire": "later"}, "misfire must be 'skip' or 'run-once'"),
        (
            {"every": "1h", "jitter": "10m", "grace": "5m"},
            "jitter (600s) must not exceed grace (300s)",
        ),
        ({"every": "1h", "when": "now"}, "unknown schedule key 'when'"),
    ],
)
def test_bad_schedules(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_schedule(data)


def test_round_trip_through_the_stored_form() -> None:
    schedule = parse_schedule(
        {
            "cron": "0 9 * * MON",
            "timezone": "Europe/Berlin",
            "start": "2024-01-01T00:00:00+01:00",
            "jitter": "30s",
            "misfire": "skip",
            "grace": "10m",
        }
    )
    again = parse_schedule(schedule.to_dict())
    assert again == schedule
    assert again.misfire is Misfire.SKIP
    assert again.grace == 600
    assert again.jitter == 30


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("15m", 900),
        ("6h", 21600),
        ("1d", 86400),
        ("1h30m", 5400),
        (45, 45),
        ("120", 120),
    ],
)
def test_durations(text: str | int, seconds: int) -> None:
    assert parse_duration(text) == seconds


def test_format_duration() -> None:
    assert [format_duration(s) for s in (90, 900, 3600, 86400, 604800)] == [
        "90s",
        "15m",
        "1h",
        "1d",
        "1w",
    ]


def test_jitter_is_stable_bounded_and_keeps_the_slot() -> None:
    schedule = parse_schedule({"every": "1m", "jitter": "30s"})
    slots = fire_times_between(schedule, utc("2024-01-01T00:00:00Z"), utc("2024-01-01T10:00:00Z"))
    delays = [jitter_delay(schedule, "plan-a", s) for s in slots]
    assert all(timedelta(0) <= d <= timedelta(seconds=30) for d in delays)
    assert len(set(delays)) > 5  # spread out, not one constant
    assert delays == [jitter_delay(schedule, "plan-a", s) for s in slots]  # same answer every time
    assert jitter_delay(parse_schedule({"every": "1m"}), "plan-a", slots[0]) == timedelta(0)


def test_is_late_uses_grace_after_jitter() -> None:
    schedule = parse_schedule({"every": "1h", "grace": "5m"})
    slot = utc("2024-01-01T01:00:00Z")
    assert not is_late(schedule, "p", slot, slot + timedelta(minutes=5))
    assert is_late(schedule, "p", slot, slot + timedelta(minutes=5, seconds=1))


def test_naive_after_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        next_fire_times(parse_schedule({"every": "1h"}), datetime(2024, 1, 1), 1)


def test_plans_with_the_same_cron_share_one_parsed_form() -> None:
    first = parse_schedule({"cron": "0 9 * * MON"})
    again = parse_schedule({"cron": " 0 9 * * MON "})
    other = parse_schedule({"cron": "30 17 1 * *"})
    assert first.cron is not None
    assert again.cron is first.cron  # one object for one expression
    assert other.cron is not None
    assert other.cron.months is first.cron.months  # `*` is one set for every expression
    assert other.cron.hours == frozenset({17})
    with pytest.raises(ValueError, match="cron must be a string"):
        parse_schedule({"cron": ["0", "9"]})  # not a string: refused, not a cache error
