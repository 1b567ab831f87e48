"""Review 18j: a wallet's order history only grows (every order it ever closed, 10
a page). A history longer than the follower's page cap must not stop the follower
from recording the close of an order of ours that sits on its first page; on SQLite
and PostgreSQL through the emulator over loopback."""

from __future__ import annotations

from solders.pubkey import Pubkey
from solders.signature import Signature

from jupcron.emulator.ledger import RecurringOrder
from jupcron.follower import OrderFollower
from jupcron.follower.orders import MAX_PAGES
from jupcron.store import follow
from jupcron.store.engine import begin
from tests.fixtures.follow import DAY, SOL, FollowRigFactory, recurring_request
from tests.fixtures.runner import USDC
from tests.integration.test_follow_unaccounted import Counting


def test_an_order_closed_on_the_first_page_of_a_very_long_history_is_recorded(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True)
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    order = f.rig.run(f.fire(plan)).order_account
    assert order is not None
    old = f.clock.wall() - 400 * DAY
    for n in range(MAX_PAGES * 10 + 15):  # years of the wallet's orders, all closed
        key = str(Pubkey.new_unique())
        f.rig.emulator.ledger.recurring_orders[key] = RecurringOrder(
            order=key, user=f.rig.wallet.address, input_mint=USDC, output_mint=SOL,
            in_amount=100_000_000, number_of_orders=2, interval=DAY, created_at=old + n,
            signature=str(Signature.new_unique()), status="completed", updated_at=old + n,
        )  # fmt: skip
    f.clock.advance(2 * DAY)  # both rounds filled: ours is the newest of the history
    api = Counting(f.client())

    OrderFollower(f.engine, api, f.rig.wallet.address, f.clock).poll()
    assert api.pages["recurring", "history"] == 1  # found on the first page
    with begin(f.engine) as conn:
        assert order in follow.closed_orders(conn, "recurring")
        assert follow.events(conn, "follow_bad_page") == []
    assert len(f.fills("dca")) == 2 == len(f.ledger_fills(order))
