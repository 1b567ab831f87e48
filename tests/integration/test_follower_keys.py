"""The follower against answers whose identifiers carry stray whitespace (the docs'
own example has ``openTx``/``txId`` ending in a newline): an order one of whose
trades could not be read is never closed, whatever its key looks like."""

from __future__ import annotations

from typing import Any

from jupcron.store import follow
from tests.fixtures.follow import (
    DAY,
    FollowRigFactory,
    listing_edited,
    poll_with,
    recurring_request,
)


def test_an_order_key_with_a_trailing_newline_and_an_unreadable_trade_stays_open(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """Before: the page's problem named the key as sent (``KEY\\n``), the order as read
    had it stripped, so the order counted as readable: it was closed from an answer
    missing a trade, and that fill was never stored."""
    f = make_follow_rig(db_url)
    plan = f.rig.plan("recurring", recurring_request(3), name="dca")
    run_id = f.fire(plan)
    order = f.rig.run(run_id).order_account
    assert order is not None
    f.clock.advance(3 * DAY)  # every round filled: the order is in the history

    def edit(item: dict[str, Any]) -> dict[str, Any]:
        trades = [dict(t) for t in item.get("trades", [])]
        if trades:
            del trades[0]["rawOutputAmount"]  # one trade this answer cannot give
        return {**item, "orderKey": item["orderKey"] + "\n", "trades": trades}

    api = listing_edited(f, edit)
    results = poll_with(f, api)
    assert results[0].errors >= 1
    with f.engine.connect() as conn:
        assert order not in follow.closed_orders(conn, "recurring")
    f.follower().poll()  # a whole answer: every fill, then closed
    assert len(f.fills("dca")) == 3 == len(f.ledger_fills(order))
    with f.engine.connect() as conn:
        assert order in follow.closed_orders(conn, "recurring")
