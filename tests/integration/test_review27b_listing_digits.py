"""A listing whose amount is a string of digits that are not ASCII ("²", "１２"):
Python's ``str.isdigit`` says yes to them, ``int`` no (or reads "１２" as 12 while the
store keeps the text, which SQL's CAST and the report cannot read).

Before: such an amount passed the parser; the follower's ``int`` of it raised a
ValueError out of `OrderFollower.poll` (whose contract: it never raises for the
API's troubles), which in the daemon ends the whole poll (every later wallet and
the V2 follower skipped, at every poll while the listing says it), and a trade's
amount was stored as the text, so ``jupcron report`` failed on it for good."""

from __future__ import annotations

from typing import Any

import pytest

from jupcron.store import follow
from tests.fixtures.follow import (
    DAY,
    FollowRigFactory,
    listing_edited,
    poll_with,
    recurring_request,
)


@pytest.mark.parametrize("digits", ["²", "１２"])
def test_an_amount_of_non_ascii_digits_is_a_problem_of_its_order_not_an_exception(
    make_follow_rig: FollowRigFactory, db_url: str, digits: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    f.fire(plan)
    f.clock.advance(3 * DAY)  # both rounds done: the order is in the history

    def edit(order: dict[str, Any]) -> dict[str, Any]:
        trades = [{**t, "rawInputAmount": digits} for t in order.get("trades", [])]
        return {**order, "rawInUsed": digits, "trades": trades}

    results = poll_with(f, listing_edited(f, edit))
    assert results[0].errors >= 1
    with f.engine.connect() as conn:
        invalid = follow.events(conn, "follow_answer_invalid")
        closed = follow.closed_orders(conn, "recurring")
    assert invalid, "the unreadable amount is recorded"
    assert not closed  # never closed from an answer that could not be read whole
    assert all(r["in_amount"].isascii() for r in f.fills())
    f.report("dca")  # the store holds nothing the report cannot read
