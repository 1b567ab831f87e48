"""Cron in a zone whose spring gap ends the local day (America/Nuuk: 2024-03-30
23:00 -02 becomes 2024-03-31 00:00 -01, so 23:xx does not exist): the shifted 23:xx
of the 30th is the 31st's 00:xx, which the 31st also yields. Or whose repeated hour
spans midnight (America/Goose_Bay, 2005-10-30 00:01 ADT became 2005-10-29 23:01 AST):
the 29th's second 23:30 comes after the 30th's first 00:00. Each instant must come
out once, in order: else a catch-up lists the slot it runs among the skipped ones, and
the live scheduler (the next slot after the one that fired) passes one over."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from jupcron.scheduling.catchup import catch_up
from jupcron.scheduling.schedule import (
    fire_times_between,
    next_fire_times,
    parse_schedule,
)

NUUK_GAP = datetime(2024, 3, 31, 1, 0, tzinfo=UTC)  # 2024-03-31T00:00-01:00
GOOSE_BAY_FOLD = datetime(2005, 10, 29, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("cron", "tz"),
    [
        ("0 * * * *", "America/Nuuk"),
        ("*/30 * * * *", "America/Nuuk"),
        ("30 0,23 * * *", "America/Nuuk"),
        ("0 9 * * *", "Pacific/Apia"),  # 2011-12-30 did not exist there
        ("*/30 * * * *", "America/Goose_Bay"),
        ("0,30 23 * * *", "America/Goose_Bay"),
    ],
)
def test_fire_times_are_strictly_increasing_across_a_change_at_midnight(cron: str, tz: str) -> None:
    schedule = parse_schedule({"cron": cron, "timezone": tz})
    starts = (NUUK_GAP - timedelta(days=2), datetime(2011, 12, 28, tzinfo=UTC), GOOSE_BAY_FOLD)
    for start in starts:
        got = fire_times_between(schedule, start, start + timedelta(days=4))
        assert got
        assert all(a < b for a, b in itertools.pairwise(got)), [g.isoformat() for g in got]
        assert next_fire_times(schedule, start, len(got)) == got
        # the live scheduler: the next slot after the one that just fired
        chained = [start]
        while len(chained) <= len(got):
            chained += next_fire_times(schedule, chained[-1], 1)
        assert chained[1:] == got


def test_the_repeated_half_hour_across_midnight_fires_each_real_half_hour() -> None:
    schedule = parse_schedule({"cron": "*/30 * * * *", "timezone": "America/Goose_Bay"})
    start = datetime(2005, 10, 30, 1, 0, tzinfo=UTC)  # 2005-10-29 22:00 ADT
    got = fire_times_between(schedule, start, start + timedelta(hours=4))
    assert {b - a for a, b in itertools.pairwise(got)} == {timedelta(minutes=30)}
    assert len(got) == 8


def test_run_once_after_downtime_across_the_gap_runs_the_latest_slot_not_skips_it() -> None:
    schedule = parse_schedule({"cron": "0 * * * *", "timezone": "America/Nuuk"})
    last = NUUK_GAP - timedelta(hours=2)  # 21:00 -02 ran
    now = NUUK_GAP + timedelta(minutes=2)  # back at 00:02 -01
    result = catch_up(schedule, last, since=last - timedelta(days=1), now=now)
    assert result.run == NUUK_GAP
    assert result.skipped == [NUUK_GAP - timedelta(hours=1)]  # 22:00 -02
