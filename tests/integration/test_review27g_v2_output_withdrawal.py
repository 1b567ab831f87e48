"""A Trigger V2 price order's refund is what its withdrawals gave back *of its input
mint*; a withdrawal of the output (the keeper's ``ready_withdraw_output`` ->
``withdrawing`` raw states deliver a fill's output from the vault: a ``withdrawal``
event with ``mint`` = the output mint, trigger/order-history.mdx, Raw States) is no
refund.

Before: the follower summed every landed withdrawal's ``amount`` whatever its
``mint``: a price order half filled, then cancelled, was recorded (followed_orders,
the audit view, ``jupcron report``) as having refunded its unfilled input *plus* the
fill's output, an amount of another token added to the input's; and its
``close_tx`` was the oldest withdrawal of the history's newest-first list (the
output's), not the cancel's, so the cancel run's transaction had no followed order
to show it landed. On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from solders.signature import Signature

from jupcron.api.client import SPARE_WAIT
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from jupcron.store.follow import landed_evidence
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.trigger_v2 import ORDER_REQUEST, v2_orders

HOUR = 3600


def test_an_output_withdrawal_is_no_refund_of_a_cancelled_price_order(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    follower = TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)
    run_id = f.fire(f.rig.plan("trigger-v2-order", ORDER_REQUEST, name="v2-price"))
    (order,) = v2_orders(f.rig)
    f.clock.advance(HOUR)
    # the keeper fills half of it, and delivers the output from the vault to the wallet
    half, got = order.amount // 2, 15_000_000
    stamp = int(f.clock.now.timestamp() * 1000)
    order.in_used, order.out_total, order.updated_at = half, got, f.clock.now.timestamp()
    order.events += [
        {"type": "fill", "timestamp": stamp, "txSignature": str(Signature.new_unique()),
         "state": "success", "amount": str(half), "outputMint": order.output_mint,
         "outputAmount": str(got)},
        {"type": "withdrawal", "timestamp": stamp + 1, "txSignature": str(Signature.new_unique()),
         "state": "success", "mint": order.output_mint, "amount": str(got)},
    ]  # fmt: skip
    f.clock.advance(HOUR)
    cancel = f.fire(f.rig.plan("trigger-v2-cancel", {"order": order.id, "family": "price"},
                               name="v2-withdraw"))  # fmt: skip
    assert order.state == "cancelled"
    follower.poll()

    (stored,) = f.sql("SELECT state, refunded, close_tx FROM followed_orders")
    signature = f.rig.run(cancel).signature
    assert stored == {"state": "cancelled", "refunded": str(order.amount - half),
                      "close_tx": signature}  # fmt: skip
    assert f.report("v2-price").refunded == order.amount - half
    with f.engine.connect() as conn:
        assert landed_evidence(conn, cancel) is not None
    assert [(r["run_id"], r["out_amount"]) for r in f.fills("v2-price")] == [(run_id, str(got))]
