"""A wallet renamed in the config (the same keypair under a new name, as
`safety.caps` and the Trigger V2 vault pin allow): the recurring orders its runs made
under the old name are still followed, their fills and refund still recorded.

Before: the follower took a wallet's runs by the *name* they were claimed under;
after ``default`` -> ``main`` no follower asked for the ``default`` runs any more, so
their open orders' later fills, their close and their refund were never recorded,
and nothing said so (no event, no alert)."""

from __future__ import annotations

from jupcron.follower import OrderFollower
from tests.fixtures.follow import DAY, FollowRigFactory, recurring_request


def test_the_orders_of_a_renamed_wallet_are_still_followed(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    run = f.fire(f.rig.plan("recurring", recurring_request(2), name="dca"))
    assert f.rig.run(run).wallet == "default"
    f.clock.advance(2 * DAY)  # both rounds filled: the order is done
    # the config now names the same keypair `main` (a new process: its follower)
    renamed = OrderFollower(f.engine, f.client(), f.rig.wallet.address, f.clock, "main")
    renamed.poll()
    assert len(f.fills("dca")) == 2
    rows = f.sql("SELECT run_id, state FROM followed_orders")
    assert rows == [{"run_id": run, "state": "completed"}]
