"""A Trigger V2 price order whose deposit failed holds nothing in the vault.

Jupiter's order-history page (jup-ag/docs trigger/order-history.mdx, Raw States) maps
three raw states to the display state ``failed``: ``deposit_failed`` ("Deposit
transaction failed on-chain (e.g. insufficient balance)"), ``withdraw_failed`` and
``fill_failed``. Only the last two can leave funds in the vault. The follower read
every ``failed`` price order as held: an order whose deposit never landed was told to
the operator as "N of the input waits in the vault; to withdraw: a trigger-v2-cancel
plan", followed (its history read) at every poll for ever, and the cancel it pointed
to failed, as there is nothing to withdraw. A DCA's ``deposit_failed`` was already
closed; a price order's is now too, and its cancel is skipped as nothing to cancel.
On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from jupcron.api.client import SPARE_WAIT, JupiterClient
from jupcron.domain import RunStatus
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from jupcron.runner.recovery import recover
from tests.fixtures.runner import Rig, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, cancel_plan, order_plan, requests, v2_orders, v2_rig

PAST_EXPIRY = 600  # seconds: well past the deposit's blockhash
HOUR = 3600


def _stored(rig: Rig, order_id: str) -> dict[str, Any]:
    with rig.engine.connect() as conn:
        (row,) = conn.execute(
            text("SELECT * FROM followed_orders WHERE order_account = :o"), {"o": order_id}
        )
        return dict(row._mapping)


def _told(rig: Rig, order_id: str) -> list[str]:
    with rig.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT step FROM follow_events WHERE order_account = :o ORDER BY id"),
            {"o": order_id},
        )
        return [step for (step,) in rows]


def test_a_price_order_whose_deposit_failed_is_closed_not_held_and_its_cancel_skipped(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = v2_rig(make_rig, db_url)
    rig.emulator.state.v2.unconfirmed = 2  # the create, and its re-post by recovery
    outcome = outcome_of(rig.runner().fire(order_plan(rig), SLOT))
    clock.advance(PAST_EXPIRY)
    (settled,) = recover(rig.runner(), runs=[outcome.run_id])
    assert settled.status is RunStatus.IN_DOUBT, settled  # followed: it may have landed
    (order,) = v2_orders(rig)
    # Jupiter's verdict on the deposit that never landed: the documented raw state
    order.state = "deposit_failed"
    for event in order.events:
        if event["type"] == "deposit":
            event["state"] = "failed"
    assert rig.landed() == []  # nothing reached the vault

    client = JupiterClient(rig.url, api_key=None, transport=rig.transport, rate_limit=1000,
                           sleep=lambda s: None)  # fmt: skip
    try:
        session = trigger_v2_session(client, rig.wallet, clock)
        follower = TriggerV2Follower(rig.engine, session, clock, spare=SPARE_WAIT)
        follower.poll()
        stored = _stored(rig, order.id)
        assert (stored["state"], stored["api_status"]) == ("cancelled", "deposit_failed"), stored
        assert stored["refunded"] is None
        assert "order_held" not in _told(rig, order.id), _told(rig, order.id)
        clock.advance(HOUR)
        before = requests(rig, "trigger_v2_history_price")
        follower.poll()
        assert requests(rig, "trigger_v2_history_price") == before  # closed: not read again
    finally:
        client.close()

    cancel = outcome_of(rig.runner().fire(cancel_plan(rig, order.id, "price"), SLOT))
    assert cancel.status is RunStatus.SKIPPED, cancel
    assert requests(rig, "trigger_v2_cancel") == 0  # nothing crafted, nothing to sign
