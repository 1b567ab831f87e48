"""A signed run is posted as it was ordered, whatever `plans apply` made of its plan
since (review 27k).

Recovery hands a run its plan as the store has it now. For a run already signed that
plan chose what the signed bytes were posted to: its kind picked the product whose
execute step posts them. A Trigger V2 DCA plan edited into a price order (the same
name, another kind) while its signed deposit waited had the deposit posted to the
price-order create with the DCA's terms, or a swap plan edited into a recurring one
had its Ultra transaction posted to the Recurring execute: refused, the run `failed`
though its bytes were never posted where they belong. A signed or submitted run is
now posted under the plan version it was claimed (and signed) under
(``plan_versions``). On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from jupcron.store import plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from tests.fixtures.runner import REQUESTS, Rig, RigFactory
from tests.fixtures.trigger_v2 import DCA_REQUEST, ORDER_REQUEST, SLOT, v2_orders, v2_rig


@pytest.fixture(autouse=True)
def _disarmed() -> Iterator[None]:
    yield
    failpoints.disarm()


def _apply(rig: Rig, kind: str, request: dict[str, Any]) -> PlanRecord:
    """`plans apply` of the plan file `buy` as it now reads."""
    plan = plans.PlanInput(name="buy", kind=kind, schedule={"every": "1h"}, request=request,
                           settings={})  # fmt: skip
    with transaction(rig.factory) as session:
        plans.apply(session, [plan], datetime.now(UTC))
    with transaction(rig.factory) as session:
        record = plans.get_plan(session, "buy")
    assert record is not None
    return record


def _signed_then_crashed(rig: Rig, plan: PlanRecord) -> int:
    failpoints.arm("after_sign")
    with pytest.raises(failpoints.SimulatedCrash):
        rig.runner().fire(plan, SLOT)
    failpoints.disarm()
    (run_id,) = rig.run_ids()
    assert rig.run(run_id).status is RunStatus.SIGNED
    return int(run_id)


def test_a_signed_v2_dca_deposit_is_created_as_a_dca_after_the_plan_became_a_price_order(
    make_rig: RigFactory, db_url: str
) -> None:
    _, rig = v2_rig(make_rig, db_url)
    run_id = _signed_then_crashed(rig, _apply(rig, "trigger-v2-dca", dict(DCA_REQUEST)))
    assert _apply(rig, "trigger-v2-order", dict(ORDER_REQUEST)).version == 2

    outcomes = recover(rig.runner(), startup=True)

    assert [(o.run_id, o.status) for o in outcomes] == [(run_id, RunStatus.SUCCEEDED)], (
        outcomes, rig.steps(run_id))  # fmt: skip
    (order,) = v2_orders(rig)
    assert (order.family, order.amount) == ("dca", DCA_REQUEST["inputAmount"])
    assert order.order_count == DCA_REQUEST["orderCount"]


def test_a_signed_swap_is_posted_to_the_swap_execute_after_the_plan_became_recurring(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    run_id = _signed_then_crashed(rig, _apply(rig, "swap", dict(REQUESTS["swap"])))
    assert _apply(rig, "recurring", dict(REQUESTS["recurring"])).version == 2

    outcomes = recover(rig.runner(), startup=True)

    assert [(o.run_id, o.status) for o in outcomes] == [(run_id, RunStatus.SUCCEEDED)], (
        outcomes, rig.steps(run_id))  # fmt: skip
    (landed,) = rig.landed()
    assert landed.signature == rig.run(run_id).signature
