"""A `trigger-v2-cancel` plan edited after a run: the run's order is the one it was
claimed to cancel, in the family its plan version named, not what the plan says now.

Before: the V2 follower (`products.trigger_v2.follower.targets`) read a cancel run's
order *family* (and, for a run that failed before ordering, its order) from the
plan's current request, as v1's follower did before it was fixed. After ``plans
apply`` of the plan edited to cancel a price order instead, the DCA order the first
run had withdrawn was looked for in the price history: its cancel and refund were
never recorded (and an hour later it was told ``order_unaccounted``, a false alarm
about money already back in the wallet). On SQLite and PostgreSQL, against the
emulator over loopback."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.api.client import SPARE_WAIT
from jupcron.chain.wallet import sign_transaction
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from jupcron.store import plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from tests.fixtures.follow import FollowRig, FollowRigFactory
from tests.fixtures.runner import ONE_ATTEMPT
from tests.fixtures.trigger_v2 import DCA_REQUEST, v2_orders

DAY = 86_400
ANOTHER = "0b6f3c1e-2d4a-4f5b-9c8d-7e6f5a4b3c2d"  # a price order the edited plan names


def _open_elsewhere(f: FollowRig) -> str:
    """A DCA order the wallet opens in another app: no run of ours made it."""
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    session.vault()
    deposit = session.craft_deposit({"inputMint": DCA_REQUEST["inputMint"],
                                     "outputMint": DCA_REQUEST["outputMint"],
                                     "amount": str(DCA_REQUEST["inputAmount"]),
                                     "orderType": "dca"})  # fmt: skip
    signed = sign_transaction(f.rig.wallet, deposit.transaction)
    body = {"inputMint": DCA_REQUEST["inputMint"], "outputMint": DCA_REQUEST["outputMint"],
            "inputAmount": str(DCA_REQUEST["inputAmount"]), "orderType": "time_based",
            "orderCount": DCA_REQUEST["orderCount"],
            "intervalSeconds": DCA_REQUEST["intervalSeconds"]}  # fmt: skip
    return session.create("dca", body, deposit.request_id, signed.b64).id


def _apply(f: FollowRig, request: dict[str, str]) -> PlanRecord:
    """`plans apply` of the cancel plan file as it now reads."""
    plan = plans.PlanInput(name="v2-stop", kind="trigger-v2-cancel", schedule={"every": "1h"},
                           request=request, settings={})  # fmt: skip
    with transaction(f.rig.factory) as session:
        plans.apply(session, [plan], datetime.now(UTC))
    with transaction(f.rig.factory) as session:
        record = plans.get_plan(session, "v2-stop")
    assert record is not None
    return record


def test_an_edited_v2_cancel_plan_leaves_its_earlier_run_with_the_order_it_cancelled(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True, api=ONE_ATTEMPT)
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    follower = TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)
    order_id = _open_elsewhere(f)
    f.clock.advance(DAY)  # two rounds filled
    withdrew = f.fire(_apply(f, {"order": order_id, "family": "dca"}))
    (order,) = v2_orders(f.rig)
    assert order.state == "cancelled"
    # the plan file now cancels a price order; the follower had not polled in between
    edited = _apply(f, {"order": ANOTHER, "family": "price"})
    assert edited.version == 2
    follower.poll()

    stored = f.sql("SELECT order_account, run_id, state, refunded FROM followed_orders")
    refund = str(DCA_REQUEST["inputAmount"] - order.in_used)
    assert stored == [
        {"order_account": order_id, "run_id": withdrew, "state": "cancelled", "refunded": refund}
    ]
    fills = f.sql("SELECT run_id FROM fills WHERE order_account = :o", o=order_id)
    assert [r["run_id"] for r in fills] == [withdrew] * 2
