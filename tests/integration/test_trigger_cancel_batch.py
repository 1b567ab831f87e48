"""Plan kind ``trigger-cancel-batch`` (issue 30 item 4: Trigger v1's batch
``cancelOrders``), on SQLite and PostgreSQL through the emulator: the named orders
close in one transaction, their refunds come back and are in the report; orders all
already closed make a skip; a transaction closing an order the plan does not name
is refused by txguard."""

from __future__ import annotations

import json
from datetime import timedelta

from jupcron.domain import RunStatus
from jupcron.emulator.txbuild import build_unsigned, to_b64
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC, outcome_of


def seed(f: FollowRig, making: int) -> str:
    body = {"maker": f.rig.wallet.address, "makingAmount": making, "takingAmount": making * 8,
            "inputMint": USDC, "outputMint": SOL}  # fmt: skip
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-orders", {}, {},
                                   json.dumps(body).encode())  # fmt: skip
    assert answer.status == 200, answer.body
    return str(answer.json()["order"])


def test_a_batch_cancel_closes_the_named_orders_and_their_refunds_are_in_the_report(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    orders = [seed(f, 1_000_000 * (n + 1)) for n in range(3)]
    spared = seed(f, 9_000_000)  # not named: stays open
    f.follower().poll()
    before = f.rig.emulator.ledger.balance(f.rig.wallet.address, USDC)
    plan = f.rig.plan("trigger-cancel-batch", {"orders": orders}, name="stop-all")
    run = f.rig.run(f.fire(plan))
    assert run.status is RunStatus.SUCCEEDED
    held = f.rig.emulator.ledger.trigger_orders
    assert [held[o].status for o in orders] == ["Cancelled"] * 3
    assert held[spared].status == "Open"
    assert f.rig.emulator.ledger.balance(f.rig.wallet.address, USDC) == before + 6_000_000
    f.follower().poll()  # in the history now: cancelled, each refunded
    assert f.report("stop-all").refunded == 6_000_000


def test_a_batch_cancel_of_orders_already_closed_is_skipped(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("trigger-cancel-batch", {"orders": [seed(f, 1_000_000)]}, name="stop")
    f.fire(plan)
    again = outcome_of(f.rig.runner().fire(plan, f.clock.now + timedelta(hours=1)))
    assert again.status is RunStatus.SKIPPED
    run = f.rig.run(again.run_id)
    assert (run.error_code, run.signed_tx) == ("order_gone", None)
    assert (run.error or "").startswith("nothing to cancel")


def test_a_batch_closing_an_order_the_plan_does_not_name_is_refused(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    named, other = seed(f, 1_000_000), seed(f, 2_000_000)
    plan = f.rig.plan("trigger-cancel-batch", {"orders": [named]}, name="stop")
    from solders.pubkey import Pubkey

    from jupcron.runner.judge import judge
    from jupcron.txguard import GuardPolicy

    owner = Pubkey.from_string(f.rig.wallet.address)
    usdc = Pubkey.from_string(USDC)
    both = [(Pubkey.from_string(named), usdc), (Pubkey.from_string(other), usdc)]
    tx = to_b64(build_unsigned("trigger_cancel_batch", owner, batch=both))
    reasons = judge(
        tx, plan, owner, GuardPolicy.from_config(f.rig.config.guard), ordered={}
    ).reasons
    assert any(f"is for order {other}" in r for r in reasons), reasons
    only = to_b64(build_unsigned("trigger_cancel_batch", owner, batch=both[:1]))
    assert list(judge(only, plan, owner, GuardPolicy.from_config(f.rig.config.guard),
                      ordered={}).reasons) == []  # fmt: skip
