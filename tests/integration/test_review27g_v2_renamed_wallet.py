"""A wallet renamed in the config (the same keypair under a new name, as the Trigger
V2 vault pin allows: docs/products.md, "a wallet renamed in the config keeps its
pin"): the V2 orders its runs made under the old name are still followed.

Before: the V2 follower took a wallet's runs by the *name* they were claimed under
(`products.trigger_v2.follower.targets`), as v1's did before it was fixed; after
``default`` -> ``main`` no follower asked for the ``default`` runs any more, so the
DCA order's rounds, its cancel and its refund were never recorded, and nothing said
so. On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from jupcron.follower.loop import FollowerLoop
from jupcron.runner.core import trigger_v2_session
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.trigger_v2 import DCA_REQUEST

DAY = 86_400


def test_the_v2_orders_of_a_renamed_wallet_are_still_followed(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    run = f.fire(f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="v2-dca"))
    assert f.rig.run(run).wallet == "default"
    f.clock.advance(DAY)  # rounds at 0 and 1 day are filled
    # the config now names the same keypair `main` (a new process: its follower loop)
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    loop = FollowerLoop(f.engine, f.client(), {"main": f.rig.wallet.address}, interval=3600,
                        clock=f.clock, trigger_v2={"main": session})  # fmt: skip
    loop.poll_once()
    assert [r["run_id"] for r in f.fills("v2-dca")] == [run, run]
    rows = f.sql("SELECT run_id, state FROM followed_orders")
    assert rows == [{"run_id": run, "state": "open"}]
