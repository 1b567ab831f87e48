"""The API's clock as an answer's ``Date`` shows it (`jupcron.api.pacer.server_now`):
a reset time is read against it, not against our clock, which may be minutes off."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from jupcron.api.pacer import Pacer, server_now

AT = 1_800_000_000.0  # the API's clock when it answered (a whole second)


def headers(date: str | None, reset: float) -> dict[str, str]:
    found = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(reset))}
    if date is not None:
        found["date"] = date
    return found


@pytest.mark.parametrize("skew", [-300.0, -30.0, 30.0, 300.0])
def test_a_clock_off_reads_the_reset_on_the_apis_clock(skew: float) -> None:
    now = AT + skew
    pacer = Pacer(10, clock=lambda: 0.0, wall=lambda: now, sleep=lambda s: None)
    assert pacer.reset_in(headers(formatdate(AT, usegmt=True), AT + 7)) == pytest.approx(7.0)


# an answer read a moment after it was made (the next second), or a clock a little
# behind: within CLOCK_SLACK our own reading stands (counting from the Date's second
# start held the key off up to a second too long at the limit)
@pytest.mark.parametrize("ours", [AT, AT + 0.4, AT + 1.0, AT + 1.7, AT - 0.6])
def test_a_clock_within_the_dates_second_keeps_its_own_precision(ours: float) -> None:
    assert server_now({"date": formatdate(AT, usegmt=True)}, ours) == ours


@pytest.mark.parametrize("date", [None, "", "yesterday", "Mon, 99 Foo 2026 25:61:00 GMT"])
def test_no_readable_date_falls_back_to_our_clock(date: str | None) -> None:
    given = {} if date is None else {"date": date}
    assert server_now(given, AT + 300) == AT + 300
