"""A Trigger V2 price order that filled, but whose output never left the vault (raw
state ``withdraw_failed``, shown ``failed``), is held: and the operator is told that
the OUTPUT waits there (review 27k).

Before: the held alert named the order's remaining input (nothing: it all filled) of
its input mint as what waits, "0 of <input mint> waits in the vault", and never said
the output was stuck at all. On SQLite and PostgreSQL, against the emulator over
loopback."""

from __future__ import annotations

from solders.signature import Signature

from jupcron.api.client import SPARE_WAIT
from jupcron.follower.loop import describe
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from jupcron.store.notices import claim_notices
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.trigger_v2 import ORDER_REQUEST, v2_orders

HOUR = 3600


def test_a_filled_price_order_whose_output_waits_in_the_vault_says_the_output(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    follower = TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)
    f.fire(f.rig.plan("trigger-v2-order", ORDER_REQUEST, name="v2-price"))
    (order,) = v2_orders(f.rig)
    f.clock.advance(HOUR)
    # the keeper fills it all; delivering the output from the vault fails
    got = 30_000_000
    stamp = int(f.clock.now.timestamp() * 1000)
    order.in_used, order.out_total, order.updated_at = order.amount, got, f.clock.now.timestamp()
    order.state = "withdraw_failed"
    order.events += [
        {"type": "fill", "timestamp": stamp, "txSignature": str(Signature.new_unique()),
         "state": "success", "amount": str(order.amount), "outputMint": order.output_mint,
         "outputAmount": str(got)},
    ]  # fmt: skip
    follower.poll()

    (notice,) = claim_notices(f.engine)
    line = describe(notice)
    assert notice.step == "order_held", line
    assert notice.detail.get("remaining") == str(got), line
    assert notice.input_mint == order.output_mint, line
    assert f"of {order.input_mint}" not in line, line
