"""A Trigger v1 order named first by a cancel run that did not close it (its execute
answered Failed), then by one that cancelled it: the follower puts the order against
the run that succeeded, and its fills go with it (as the V2 follower does,
`follow.move_trades`).

Before: the fills the follower stored while the first run was the order's were left
against that run, the refund against the other: one order's money split over two
runs, the first run's audit showing fills of a cancel it never made."""

from __future__ import annotations

import json
from datetime import timedelta

from jupcron.domain import RunStatus
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC, outcome_of


def seed(f: FollowRig, making: int) -> str:
    body = {"maker": f.rig.wallet.address, "makingAmount": making, "takingAmount": making * 8,
            "inputMint": USDC, "outputMint": SOL}  # fmt: skip
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-orders", {}, {},
                                   json.dumps(body).encode())  # fmt: skip
    assert answer.status == 200, answer.body
    return str(answer.json()["order"])


def fill(f: FollowRig, order: str, making: int) -> None:
    body = json.dumps({"order": order, "makingAmount": making}).encode()
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-fill", {}, {}, body)
    assert answer.status == 200, answer.body


def test_the_fills_of_a_cancelled_order_are_against_the_run_that_cancelled_it(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    order = seed(f, 4_000_000)
    plan = f.rig.plan("trigger-cancel", {"order": order}, name="stop")
    f.rig.emulator.faults.extend(  # its first cancel's execute answers Failed
        [{"kind": "failed", "operation": "execute_trigger", "count": 1}]
    )
    failed = outcome_of(f.rig.runner().fire(plan, f.clock.now.replace(microsecond=0)))
    assert failed.status in (RunStatus.FAILED, RunStatus.SUBMITTED)
    f.rig.emulator.faults.clear()
    fill(f, order, 1_000_000)  # a partial fill while the order is open
    f.follower().poll()  # followed (the first cancel's order), the fill stored
    f.clock.advance(3600)
    slot = (f.clock.now + timedelta(seconds=1)).replace(microsecond=0)
    cancelled = outcome_of(f.rig.runner().fire(plan, slot))
    assert cancelled.status is RunStatus.SUCCEEDED, cancelled.error
    fill_at_close = f.rig.emulator.ledger.trigger_orders[order]
    assert fill_at_close.status == "Cancelled"
    f.follower().poll()
    rows = f.sql("SELECT run_id, refunded FROM followed_orders WHERE order_account = :o", o=order)
    assert rows == [{"run_id": cancelled.run_id, "refunded": "3000000"}]
    fills = f.fills("stop")
    assert len(fills) == 1
    assert [r["run_id"] for r in fills] == [cancelled.run_id]
