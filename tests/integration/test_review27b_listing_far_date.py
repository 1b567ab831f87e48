"""A recurring order listed with a ``createdAt`` at the end of the calendar (garbage,
or a listing's placeholder): its expected end (start + numberOfOrders x interval) is
beyond what a datetime holds, so it is not known, not an exception.

Before: the OverflowError of that sum left `OrderFollower.poll` (whose contract: it
never raises for the API's troubles); in the daemon it ended the whole poll (every
later wallet and the V2 follower skipped) at every poll while the listing said it,
and nothing of the page was recorded."""

from __future__ import annotations

from tests.fixtures.follow import (
    DAY,
    FollowRigFactory,
    listing_edited,
    poll_with,
    recurring_request,
)


def test_an_order_created_at_the_end_of_the_calendar_is_still_followed(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    f.fire(plan)
    f.clock.advance(DAY // 2)  # its first round filled, still active
    api = listing_edited(f, lambda o: {**o, "createdAt": "9999-12-31T23:59:59Z"})
    results = poll_with(f, api)
    assert [r.source for r in results] == ["recurring", "trigger"]
    assert len(f.fills("dca")) == 1
