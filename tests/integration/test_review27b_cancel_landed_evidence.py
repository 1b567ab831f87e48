"""An in-doubt ``recurring-cancel`` run whose transaction did land: the follower saw
the order closed by that very signature, so ``jupcron settle --not-landed`` is refused
(as it is for a run whose own order shows its signature), even though the order, its
fills and its refund are the creating run's.

Before: `landed_evidence` looked only at the orders put against the run itself; the
closed order is the creating run's, so nothing was found and the operator's wrong
verdict (without ``rpc.url``, nothing else checks it) was recorded: a cancel that
returned the deposit marked failed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from jupcron.errors import ConfigError
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.store.follow import landed_evidence
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.follow import DAY, FollowRigFactory, recurring_request


def test_a_cancel_whose_signature_closed_the_order_cannot_be_settled_not_landed(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    create = f.fire(f.rig.plan("recurring", recurring_request(3), name="dca"))
    order = f.rig.run(create).order_account
    f.follower().poll()
    f.clock.advance(DAY)
    cancel = f.fire(f.rig.plan("recurring-cancel", {"order": order}, name="stop"))
    with f.engine.begin() as conn:  # its execute answer was lost: nothing settled it
        conn.execute(text("UPDATE runs SET status = 'in_doubt' WHERE id = :r"), {"r": cancel})
    f.follower().poll()  # the order in the history, closed by the cancel's signature
    signature = f.rig.run(cancel).signature
    closed = f.sql("SELECT run_id, close_tx FROM followed_orders WHERE order_account = :o", o=order)
    assert closed == [{"run_id": create, "close_tx": signature}]
    with f.engine.connect() as conn:
        seen = landed_evidence(conn, cancel)
    assert seen is not None
    assert signature in seen
    wrong = Verdict(landed=False, reason="not on the explorer", by="op")
    with pytest.raises(ConfigError, match="it landed"):
        settle_in_doubt(SqlRunStore(f.engine), cancel, wrong, now=datetime.now(UTC), seen=seen)
