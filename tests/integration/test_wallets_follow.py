"""The follower with several wallets, on SQLite and PostgreSQL: each wallet's recurring
orders are read from that wallet's listing and stored against its own runs."""

from __future__ import annotations

from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.follower import FollowerLoop
from tests.fixtures.follow import DAY, FollowRigFactory, recurring_request
from tests.fixtures.runner import outcome_of

ROUNDS = 3


def test_each_wallets_orders_are_followed_from_its_own_listing(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    savings = Wallet.generate()
    runner = f.rig.runner(wallets={"default": f.rig.wallet, "savings": savings})
    runs = {}
    for name, wallet in (("main-dca", "default"), ("savings-dca", "savings")):
        plan = f.rig.plan("recurring", recurring_request(ROUNDS), name=name, wallet=wallet)
        outcome = outcome_of(runner.fire(plan, f.clock.now.replace(microsecond=0)))
        assert outcome.status is RunStatus.SUCCEEDED, outcome.error
        runs[name] = outcome.run_id
    orders = {name: f.rig.run(run_id).order_account for name, run_id in runs.items()}
    owners = {o.order: o.user for o in f.rig.emulator.ledger.recurring_orders.values()}
    assert owners[orders["main-dca"]] == f.rig.wallet.address
    assert owners[orders["savings-dca"]] == savings.address

    addresses = {"default": f.rig.wallet.address, "savings": savings.address}
    loop = FollowerLoop(f.engine, f.client(), addresses, interval=3600, clock=f.clock)
    for _ in range(ROUNDS):
        loop.poll_once()
        f.clock.advance(DAY)
    loop.poll_once()
    for name, run_id in runs.items():
        fills = f.fills(name)
        assert len(fills) == ROUNDS == len(f.ledger_fills(orders[name] or ""))
        assert {r["run_id"] for r in fills} == {run_id}
    # each follower asked its own wallet's listing, and only for that wallet's orders
    asked = f.rig.emulator.ledger.requests
    assert asked.get("recurring_orders", 0) >= 2 * (ROUNDS + 1)
