"""A recurring order whose create run is ``in_doubt`` (its execute answer never came,
nothing could settle it) and which a ``recurring-cancel`` plan then closes: the order,
its fills and its refund stay the creating run's (its plan's report), as they do when
that run succeeded.

Before: "a succeeded run wins" handed the order to the cancel run once it succeeded:
the refund (and every fill seen from then on) went to the cancel plan, the fills seen
before stayed with the DCA plan: one order split over two plans' reports."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from jupcron.domain import RunStatus
from tests.fixtures.follow import DAY, FollowRigFactory, recurring_request


@pytest.mark.parametrize("account_known", [True, False], ids=["account", "open-tx-only"])
def test_an_in_doubt_create_keeps_its_order_when_a_cancel_plan_closes_it(
    make_follow_rig: FollowRigFactory, db_url: str, account_known: bool
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("recurring", recurring_request(3), name="dca")
    create = f.fire(plan)
    order = f.rig.run(create).order_account
    assert order is not None
    # its execute answer lost, nothing settled it (and, without the create's answer
    # either, only its signature: the follower finds the order by its open tx)
    forget = "UPDATE runs SET status = 'in_doubt', order_account = :a WHERE id = :r"
    with f.engine.begin() as conn:
        conn.execute(text(forget), {"r": create, "a": order if account_known else None})
    f.follower().poll()
    f.clock.advance(DAY)
    f.follower().poll()  # two rounds filled, followed as the in-doubt run's order
    held = f.rig.emulator.ledger.recurring_orders[order]
    left = held.in_amount - held.in_used
    cancel = f.rig.run(f.fire(f.rig.plan("recurring-cancel", {"order": order}, name="stop")))
    assert cancel.status is RunStatus.SUCCEEDED
    f.follower().poll()  # in the history now: cancelled, the rest withdrawn
    rows = f.sql("SELECT run_id, state FROM followed_orders WHERE order_account = :o", o=order)
    assert rows == [{"run_id": create, "state": "cancelled"}]
    assert f.report("dca").refunded == left
    assert len(f.fills("dca")) == 2
    assert f.fills("stop") == []
