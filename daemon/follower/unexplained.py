"""What the follower cannot explain about an order of ours: said once, never
decided on.

Jupiter's Recurring and Trigger v1 listings know two lists, ``active`` and
``history`` (``orderStatus``); an order leaves the first for the second when it is
completed, cancelled or expired. Two sights fit neither, and each means money may
sit where we cannot see it:

    overdue      still active `LATE_AFTER` past its expected end: a recurring
                 order's start + numberOfOrders x interval (the docs' "total time
                 to complete"; price bounds or a stalled keeper can stretch it), a
                 trigger order's ``expiredAt``
    unaccounted  in neither list `LOST_AFTER` after it was last known to exist
                 (last listed, or its run's end): an in-doubt create that never
                 landed, a cancel of an order that is not the wallet's, or a
                 listing that lost it

Each is one ``follow_events`` row (``order_overdue`` / ``order_unaccounted``, the
order in ``detail.key``) and one warning, the first time only. Neither changes the
order's state: it stays followed, and whatever a listing shows later is recorded as
usual. An unaccounted order is looked for in the whole history only every
`SWEEP_EVERY` (the active list, read at every poll, would show it alive), so one lost
order does not cost a read of the wallet's whole history at every poll.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime, timedelta
from typing import Any

from jupcron.api.orders import ListedOrder
from jupcron.store.follow import Span

LATE_AFTER = timedelta(hours=1)  # a keeper's lag is minutes, not hours
LOST_AFTER = timedelta(hours=1)  # the listings' indexer lags by seconds to minutes
SWEEP_EVERY = timedelta(hours=1)  # whole-history reads on behalf of lost orders

OVERDUE = "order_overdue"
UNACCOUNTED = "order_unaccounted"


def expected_end(source: str, order: ListedOrder, span: Span | None) -> datetime | None:
    """When the order should have left the active list; None when nothing says (or
    it says a time beyond the calendar: a listing's ``createdAt`` is the API's word)."""
    if source == "trigger":
        return order.expired_at
    if span is None:
        return None
    start = span.start_at or order.created_at
    try:
        return None if start is None else start + span.length
    except OverflowError:
        return None


def overdue(source: str, order: ListedOrder, span: Span | None, now: datetime) -> datetime | None:
    """The expected end of an active order that is `LATE_AFTER` past it, else None."""
    end = expected_end(source, order, span)
    return end if end is not None and now - end >= LATE_AFTER else None


def overdue_detail(order: ListedOrder, end: datetime) -> dict[str, Any]:
    return {
        "key": order.order_key, "expected_end": end.isoformat(),
        "api_status": order.status or "active",
        "deposited": order.raw_in_deposited or order.raw_making_amount,
        "used": order.raw_in_used,
        "remaining": order.raw_remaining_making_amount,
    }  # fmt: skip


def lost(missing: Collection[str], known: Mapping[str, datetime], now: datetime) -> set[str]:
    """Of the orders found in neither list, those missing for `LOST_AFTER` (or never
    known to exist at all)."""
    return {k for k in missing if k not in known or now - known[k] >= LOST_AFTER}


def to_read(
    missing: Collection[str],
    known: Mapping[str, datetime],
    now: datetime,
    swept: datetime | None,
) -> tuple[set[str], set[str], bool]:
    """Which of the orders not seen yet to look for: (the lost ones, the ones to read
    for, whether this is a sweep). Lost orders are looked for only at a sweep, once
    `SWEEP_EVERY` (`swept`: the last one, None: none yet)."""
    gone = lost(missing, known, now)
    sweep = bool(gone) and (swept is None or now - swept >= SWEEP_EVERY)
    return gone, set(missing) if sweep else set(missing) - gone, sweep


def unaccounted_detail(key: str, last_known: datetime | None) -> dict[str, Any]:
    return {
        "key": key, "last_known": None if last_known is None else last_known.isoformat(),
        "lists": ["active", "history"],
    }  # fmt: skip
