"""A Trigger v1 batch-cancel plan edited after a run: the run's orders are the ones
it was claimed to cancel (its plan version's), not the ones the plan names now.

Before: the follower read a cancel run's orders from the plan's current request.
After `plans apply` of an edited order list, the run that cancelled A and B was
credited with C and D (orders it never touched: their fills and refunds went to
the wrong run, even after a later run cancelled them), and A and B were no longer
followed at all: their refunds were never recorded."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.store import plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC, outcome_of


def seed(f: FollowRig, making: int) -> str:
    body = {"maker": f.rig.wallet.address, "makingAmount": making, "takingAmount": making * 8,
            "inputMint": USDC, "outputMint": SOL}  # fmt: skip
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-orders", {}, {},
                                   json.dumps(body).encode())  # fmt: skip
    assert answer.status == 200, answer.body
    return str(answer.json()["order"])


def apply_plan(f: FollowRig, orders: list[str]) -> PlanRecord:
    """`plans apply` of the plan file as it now names `orders`."""
    plan = plans.PlanInput(name="stop", kind="trigger-cancel-batch",
                           schedule={"every": "1h"}, request={"orders": orders}, settings={})  # fmt: skip
    with transaction(f.rig.factory) as session:
        plans.apply(session, [plan], datetime.now(UTC))
    with transaction(f.rig.factory) as session:
        record = plans.get_plan(session, "stop")
    assert record is not None
    return record


def followed(f: FollowRig) -> dict[str, tuple[int, str, str | None]]:
    rows = f.sql("SELECT order_account, run_id, state, refunded FROM followed_orders")
    return {r["order_account"]: (r["run_id"], r["state"], r["refunded"]) for r in rows}


def test_an_edited_batch_cancel_plan_leaves_its_earlier_run_with_the_orders_it_cancelled(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    first = [seed(f, 1_000_000), seed(f, 2_000_000)]
    later = [seed(f, 3_000_000), seed(f, 4_000_000)]
    run1 = f.fire(apply_plan(f, first))
    held = f.rig.emulator.ledger.trigger_orders
    assert [held[o].status for o in first] == ["Cancelled"] * 2
    edited = apply_plan(f, later)  # the same plan, now to cancel two other orders
    assert edited.version == 2
    f.follower().poll()
    seen = followed(f)
    # the run cancelled `first`: their refunds are its own
    assert {o: seen.get(o) for o in first} == {
        first[0]: (run1, "cancelled", "1000000"),
        first[1]: (run1, "cancelled", "2000000"),
    }
    # it never touched `later`: no run of the plan's new version has run yet
    assert not set(later) & set(seen), seen
    # the next run (version 2) cancels them: theirs, not the first run's
    f.clock.advance(3600)
    outcome = outcome_of(f.rig.runner().fire(edited, f.clock.now.replace(microsecond=0)))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    f.follower().poll()
    seen = followed(f)
    assert {o: seen[o][0] for o in later} == {o: outcome.run_id for o in later}
