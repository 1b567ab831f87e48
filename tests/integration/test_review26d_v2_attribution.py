"""Which run a Trigger V2 order's fills and refund are put against.

Every run that names a V2 order makes it ours: the create run that opened it, and
each `trigger-v2-cancel` run naming it, failed ones included (a failed cancel may
have left it mid-cancel, its funds in the vault). An order this daemon opened is put
against its create run, always the lowest of those runs. But a cancel plan may name
any V2 order of the wallet (docs/products.md: "V2 orders are cancelled with a
`trigger-v2-cancel` plan (`order`: the V2 order id)"), one opened in Jupiter's own
app for instance; then only cancel runs name it, and the follower took the lowest:
a cancel that failed (here Jupiter's 5xx on the cancel call) got the order's DCA
rounds and the refund the next, succeeded cancel withdrew, in the audit view, the
fills view and `jupcron report`, under the failed run's plan. As v1 does
(`jupcron.store.follow.targets`), a succeeded run now wins (after the create run
that opened the order), and the rounds stored while only the failed run named it
move with the order. On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from typing import Any

from jupcron.api.client import SPARE_WAIT
from jupcron.chain.wallet import sign_transaction
from jupcron.domain import RunStatus
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from tests.fixtures.follow import FollowRig, FollowRigFactory
from tests.fixtures.runner import ONE_ATTEMPT, outcome_of
from tests.fixtures.trigger_v2 import DCA_REQUEST, v2_orders

DAY = 86_400


def _open_elsewhere(f: FollowRig) -> str:
    """A DCA order the wallet opens in another app (Jupiter's own): the same API
    calls and signature, no run of ours."""
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


def _audit(f: FollowRig, run_id: int) -> dict[str, Any]:
    (row,) = f.sql("SELECT * FROM audit WHERE run_id = :r", r=run_id)
    return row


def test_an_order_opened_elsewhere_is_put_against_the_cancel_that_withdrew_it(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True, api=ONE_ATTEMPT)
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    follower = TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)
    order_id = _open_elsewhere(f)
    f.clock.advance(DAY)  # rounds at 0 and 1 day are due
    stop = {"order": order_id, "family": "dca"}
    f.rig.emulator.faults.add("server_error", operation="trigger_v2_cancel", status=503)
    tried = outcome_of(f.rig.runner().fire(f.rig.plan("trigger-v2-cancel", stop, name="v2-stop"),
                                           f.clock.now.replace(microsecond=0)))  # fmt: skip
    assert tried.status is RunStatus.FAILED, tried
    follower.poll()  # the daemon's follower polls meanwhile: the failed run names it alone
    (order,) = v2_orders(f.rig)
    assert (order.state, order.rounds_filled) == ("active", 2)
    withdrew = f.fire(f.rig.plan("trigger-v2-cancel", stop, name="v2-stop-again"))
    assert order.state == "cancelled"
    follower.poll()

    (stored,) = f.sql("SELECT run_id, state, refunded FROM followed_orders WHERE "
                      "order_account = :o", o=order_id)  # fmt: skip
    refund = str(DCA_REQUEST["inputAmount"] - order.in_used)
    assert (stored["run_id"], stored["state"], stored["refunded"]) == (
        withdrew, "cancelled", refund)  # fmt: skip
    assert _audit(f, tried.run_id)["refunded"] is None  # the failed run moved nothing
    assert _audit(f, withdrew)["refunded"] == refund
    fills = f.sql("SELECT plan_name, run_id FROM fills WHERE order_account = :o", o=order_id)
    assert [(r["plan_name"], r["run_id"]) for r in fills] == [("v2-stop-again", withdrew)] * 2
    assert f.report("v2-stop-again").refunded == int(refund)
    assert f.report("v2-stop").refunded == 0
    (closed,) = f.sql("SELECT run_id FROM follow_events WHERE step = 'order_cancelled' AND "
                      "order_account = :o", o=order_id)  # fmt: skip
    assert closed["run_id"] == withdrew
