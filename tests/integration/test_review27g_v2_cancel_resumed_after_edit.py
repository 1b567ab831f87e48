"""A `trigger-v2-cancel` run signed, then interrupted (a crash before its confirm-cancel
was answered), while ``plans apply`` edits the plan to cancel another order: recovery
posts the signed withdrawal for the order it was crafted for.

Before: the execute step took the order id and family from the plan as the store has
it now (recovery hands the run its plan "as it is now"), so the withdrawal of order A,
signed and perhaps already sent, was posted to the confirm-cancel of the edited plan's
order B (another family's endpoint here): refused, the run failed, and A was left
mid-cancel, its funds waiting in the vault, with no record of the cancel and B put on
the run. On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from jupcron.store import plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from tests.fixtures.runner import Rig, RigFactory
from tests.fixtures.trigger_v2 import SLOT, open_dca, v2_orders

ANOTHER = "0b6f3c1e-2d4a-4f5b-9c8d-7e6f5a4b3c2d"  # a price order the edited plan names


@pytest.fixture(autouse=True)
def _disarmed() -> Iterator[None]:
    yield
    failpoints.disarm()


def _apply(rig: Rig, request: dict[str, str]) -> PlanRecord:
    """`plans apply` of the cancel plan file as it now reads."""
    plan = plans.PlanInput(name="v2-stop", kind="trigger-v2-cancel", schedule={"every": "1h"},
                           request=request, settings={})  # fmt: skip
    with transaction(rig.factory) as session:
        plans.apply(session, [plan], datetime.now(UTC))
    with transaction(rig.factory) as session:
        record = plans.get_plan(session, "v2-stop")
    assert record is not None
    return record


def test_a_signed_v2_cancel_is_confirmed_for_its_own_order_after_the_plan_is_edited(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    order_id = open_dca(rig)
    plan = _apply(rig, {"order": order_id, "family": "dca"})
    failpoints.arm("after_sign")
    with pytest.raises(failpoints.SimulatedCrash):
        rig.runner().fire(plan, SLOT)
    failpoints.disarm()
    (run_id,) = [r for r in rig.run_ids() if rig.run(r).status is RunStatus.SIGNED]
    assert _apply(rig, {"order": ANOTHER, "family": "price"}).version == 2

    outcomes = recover(rig.runner(), startup=True)
    assert [(o.run_id, o.status) for o in outcomes] == [(run_id, RunStatus.SUCCEEDED)], outcomes
    (order,) = v2_orders(rig)
    assert order.state == "cancelled"
    run = rig.run(run_id)
    assert (run.order_account, run.signature) == (order_id, rig.landed()[-1].signature)
