"""What a Trigger V2 order did, on SQLite and PostgreSQL: the follower stores its
DCA rounds as fills (source ``recurring``, like v1's), the cancel's refund, and
the audit view and `jupcron report` show them as they show v1's."""

from __future__ import annotations

from typing import Any

from jupcron.api.client import SPARE_WAIT
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from tests.fixtures.follow import FollowRig, FollowRigFactory
from tests.fixtures.runner import SOL, USDC
from tests.fixtures.trigger_v2 import DCA_REQUEST, ORDER_REQUEST, requests, v2_orders

DAY = 86_400


def _follower(f: FollowRig) -> TriggerV2Follower:
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    return TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)


def _audit(f: FollowRig, run_id: int) -> dict[str, Any]:
    (row,) = f.sql("SELECT * FROM audit WHERE run_id = :r", r=run_id)
    return row


def test_dca_rounds_and_the_cancels_refund_reach_the_fills_the_audit_and_the_report(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    follower = _follower(f)
    follower.poll()
    assert requests(f.rig, "trigger_v2_history_dca") == 0  # nothing of ours: no request
    run_id = f.fire(f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="v2-dca"))
    f.clock.advance(2 * DAY)  # rounds at 0, 1 and 2 days are due
    follower.poll()
    (order,) = v2_orders(f.rig)
    fills = [e for e in order.events if e["type"] == "fill"]
    assert len(fills) == 3
    stored = f.fills("v2-dca")
    assert [r["source"] for r in stored] == ["recurring"] * 3
    assert [r["signature"] for r in stored] == [e["txSignature"] for e in fills]
    assert {(r["input_mint"], r["output_mint"], r["order_account"]) for r in stored} == {
        (USDC, SOL, order.id)
    }
    received = sum(int(e["outputAmount"]) for e in fills)
    follower.poll()  # read again: stored once
    assert len(f.fills("v2-dca")) == 3
    report = f.report("v2-dca")
    assert (report.spent, report.received, len(report.fills)) == (30_000_000, received, 3)
    assert report.runs == {"succeeded": 1}
    audit = _audit(f, run_id)
    assert (audit["kind"], audit["spent"], audit["received"]) == (
        "trigger-v2-dca",
        "30000000",
        str(received),
    )
    cancel = f.fire(f.rig.plan("trigger-v2-cancel", {"order": order.id, "family": "dca"},
                               name="v2-stop"))  # fmt: skip
    follower.poll()
    assert f.report("v2-dca").refunded == 10_000_000
    assert _audit(f, run_id)["refunded"] == "10000000"
    assert _audit(f, cancel)["status"] == "succeeded"
    events = f.sql("SELECT step FROM follow_events WHERE order_account = :o", o=order.id)
    assert [e["step"] for e in events] == ["order_cancelled"]
    before = requests(f.rig, "trigger_v2_history_dca")
    follower.poll()
    assert requests(f.rig, "trigger_v2_history_dca") == before  # closed: no more requests


def test_an_expired_price_order_holding_funds_is_told_once_and_followed_until_withdrawn(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """Past its ``expiresAt`` a price order stops trading, but its funds stay in the vault
    until withdrawn (jup-ag/docs trigger/best-practices.mdx, Order Lifecycle: `expired`,
    "prompt user to withdraw funds"). The follower records it as held, with one
    `order_held` event saying how to withdraw, and keeps following it, so the cancel
    that withdraws the funds is recorded."""
    f = make_follow_rig(db_url)
    follower = _follower(f)
    run_id = f.fire(f.rig.plan("trigger-v2-order", ORDER_REQUEST, name="v2-price"))
    (order,) = v2_orders(f.rig)
    f.clock.advance(8 * DAY)  # expiresAfter: 7d, and the trigger price never met
    follower.poll()
    assert order.state == "expired"

    def stored() -> dict[str, Any]:
        (row,) = f.sql("SELECT * FROM followed_orders WHERE order_account = :o", o=order.id)
        return row

    def told() -> list[dict[str, Any]]:
        return f.sql("SELECT step, detail FROM follow_events WHERE order_account = :o", o=order.id)

    assert (stored()["state"], stored()["api_status"]) == ("held", "expired")
    assert stored()["closed_at"] is None
    (event,) = told()
    assert event["step"] == "order_held"
    assert "trigger-v2-cancel" in str(event["detail"])
    follower.poll()
    assert len(told()) == 1  # said once
    f.fire(f.rig.plan("trigger-v2-cancel", {"order": order.id, "family": "price"},
                      name="v2-withdraw"))  # fmt: skip
    follower.poll()
    assert stored()["state"] == "cancelled"
    assert stored()["refunded"] == str(ORDER_REQUEST["inputAmount"])
    assert _audit(f, run_id)["refunded"] == str(ORDER_REQUEST["inputAmount"])
    assert [e["step"] for e in told()] == ["order_held", "order_cancelled"]
