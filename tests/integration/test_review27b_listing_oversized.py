"""A listing with a value too big for its column (an amount beyond u64, a keeper or
a transaction id longer than any Solana key or signature): a problem of that one
order, the other orders of the page recorded as usual.

Before: the parser took any length; on PostgreSQL (the columns are VARCHAR(n)) the
insert of that one trade failed the page's whole transaction, so no order of the
page (and none of the pages after it) was recorded, at every poll while the listing
said it: the fills and refunds of every order of ours there were never stored, and
the only trace was a ``follower_poll_interrupted`` log line (no follow event)."""

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

U64_MAX = 2**64 - 1

OVERSIZED = {
    "amount beyond u64": {"rawOutputAmount": "9" * 41},
    "keeper too long": {"keeper": "K" * 65},
    "tx id too long": {"txId": "T" * 101},
}


@pytest.mark.parametrize("field", list(OVERSIZED))
def test_an_oversized_value_in_one_order_does_not_stop_the_others_being_recorded(
    make_follow_rig: FollowRigFactory, db_url: str, field: str
) -> None:
    f = make_follow_rig(db_url)
    good_plan = f.rig.plan("recurring", recurring_request(2), name="good")
    bad_plan = f.rig.plan("recurring", recurring_request(2), name="bad")
    f.fire(good_plan)
    bad = f.rig.run(f.fire(bad_plan)).order_account
    f.clock.advance(DAY // 2)  # the first round of each is filled, both still active

    def edit(order: dict[str, Any]) -> dict[str, Any]:
        if order["orderKey"] != bad:
            return order
        return {**order, "trades": [{**t, **OVERSIZED[field]} for t in order["trades"]]}

    results = poll_with(f, listing_edited(f, edit))
    assert results[0].errors >= 1
    assert len(f.fills("good")) == 1  # the other order of the page is recorded
    assert f.fills("bad") == []
    with f.engine.connect() as conn:
        invalid = follow.events(conn, "follow_answer_invalid")
    assert invalid, "the oversized value is a recorded problem"
    # an amount of exactly u64's largest is an amount, and is kept digit for digit
    top = {"rawOutputAmount": str(U64_MAX)}
    poll_with(f, listing_edited(f, lambda o: {**o, "trades": [{**t, **top} for t in o["trades"]]}
                                if o["orderKey"] == bad else o))  # fmt: skip
    assert [r["out_amount"] for r in f.fills("bad")] == [str(U64_MAX)]
