"""A cron whose fires are years apart keeps firing: none is taken for the last one.

The next fire was looked for 9 years ahead only (enough for Feb 29 alone). A cron
that restricts both day fields with one of them starting with ``*`` ANDs them (as in
Vixie cron), and such a day can be further apart: ``0 0 */28 2 MON`` (Feb 1 or Feb
29, on a Monday) fires on 2027-02-01 and next on 2038-02-01; ``0 0 29 2 */7`` (Feb 29
on a Sunday) has gaps of 40 years across a century year (2088 -> 2128). The plan
validated (its first fire was found), fired once, and then had "no fire time left":
the scheduler logged `plan_finished` and never fired it again. Checked against the
calendar itself, day by day, not against our iterator.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from jupcron.scheduling.schedule import next_fire_times, parse_schedule


def calendar_days(first: date, last: date, month: int, days: set[int], weekday: int) -> list[date]:
    """The days in [first, last] of `month` whose day is in `days` and that fall on
    `weekday` (0 = Monday, as `date.weekday`): the AND of the two day fields."""
    out = []
    day = first
    while day <= last:
        if day.month == month and day.day in days and day.weekday() == weekday:
            out.append(day)
        day += timedelta(days=1)
    return out


def chained(cron: str, start: datetime, until: datetime) -> list[date]:
    """Each fire found from the one before, as the scheduler queues a plan's next slot."""
    schedule = parse_schedule({"cron": cron})
    out: list[date] = []
    after = start
    while True:
        upcoming = next_fire_times(schedule, after, 1)
        if not upcoming or upcoming[0] > until:
            return out
        out.append(upcoming[0].date())
        after = upcoming[0]


@pytest.mark.parametrize(
    ("cron", "days", "weekday", "years"),
    [
        ("0 0 */28 2 MON", {1, 29}, 0, (2024, 2080)),  # 2027, then 2038 (11 years)
        ("0 0 29 2 */7", {29}, 6, (2024, 2140)),  # 2032, 2060, 2088, then 2128 (40 years)
    ],
)
def test_every_fire_of_a_sparse_cron_is_found_from_the_one_before(
    cron: str, days: set[int], weekday: int, years: tuple[int, int]
) -> None:
    start = datetime(years[0], 1, 1, tzinfo=UTC)
    until = datetime(years[1], 12, 31, tzinfo=UTC)
    expected = calendar_days(start.date(), until.date(), 2, days, weekday)
    assert len(expected) >= 3  # the test spans long gaps, not one fire
    assert chained(cron, start, until) == expected
