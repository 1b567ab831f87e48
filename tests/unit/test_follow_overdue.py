"""Review 18j: when an active order of ours is overdue (pure: no I/O). A recurring
order's end is its start (``startAt``, else when it was made) + numberOfOrders x
interval; a trigger order's is its ``expiredAt``; nothing is overdue before an hour
past it, and an order whose end nothing says is never overdue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jupcron.api.orders import ListedOrder
from jupcron.follower.unexplained import overdue
from jupcron.store.follow import Span

MADE = datetime(2026, 11, 1, tzinfo=UTC)
KEY = "8mF4HKoPQNmtbRvTRqotb4LW3pz5rR3eB7owZL9FVKxx"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def _order(**more: object) -> ListedOrder:
    made = {"orderKey": KEY, "inputMint": USDC, "outputMint": SOL,
            "createdAt": "2026-11-01T00:00:00Z"}  # fmt: skip
    return ListedOrder.model_validate({**made, **more})


FOUR_DAYS = Span(None, timedelta(days=4))
LATER_START = Span(MADE + timedelta(days=10), timedelta(days=4))
EXPIRY = MADE + timedelta(hours=1)
UNIX = int(EXPIRY.timestamp())


@pytest.mark.parametrize(
    ("source", "order", "span", "after", "end"),
    [
        ("recurring", _order(), FOUR_DAYS, timedelta(days=4, minutes=59), None),
        ("recurring", _order(), FOUR_DAYS, timedelta(days=4, hours=1), MADE + timedelta(days=4)),
        ("recurring", _order(), LATER_START, timedelta(days=5), None),  # not even started
        ("recurring", _order(), LATER_START, timedelta(days=15), MADE + timedelta(days=14)),
        ("recurring", _order(), None, timedelta(days=400), None),  # a cancel's: no span
        ("recurring", _order(createdAt=None), FOUR_DAYS, timedelta(days=400), None),
        ("trigger", _order(expiredAt=str(UNIX)), None, timedelta(hours=1, minutes=59), None),
        ("trigger", _order(expiredAt=str(UNIX)), None, timedelta(hours=2), EXPIRY),
        ("trigger", _order(expiredAt=UNIX), FOUR_DAYS, timedelta(days=3), EXPIRY),
        ("trigger", _order(expiredAt=None), FOUR_DAYS, timedelta(days=400), None),
    ],
)  # fmt: skip
def test_overdue(
    source: str, order: ListedOrder, span: Span | None, after: timedelta, end: datetime | None
) -> None:
    assert overdue(source, order, span, MADE + after) == end
