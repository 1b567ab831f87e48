"""Trigger V2 runs that "die" at every step boundary (failpoints), settled by a
fresh runner: exactly one order (one deposit, or one withdrawal) each time,
never a second; after signing, the same signed bytes are posted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jupcron import failpoints
from jupcron.runner.recovery import recover
from jupcron.store.types import RunStatus
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import KINDS, SLOT, dca_plan, plan_of, requests, v2_orders


@pytest.fixture(autouse=True)
def _disarmed() -> Iterator[None]:
    yield
    failpoints.disarm()


def _crash(fire: object) -> None:
    with pytest.raises(failpoints.SimulatedCrash):
        fire()  # type: ignore[operator]


def _landed_for(rig: object, kind: str) -> int:
    return 2 if kind == "trigger-v2-cancel" else 1  # a cancel's order was opened first


@pytest.mark.parametrize("point", failpoints.NAMES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_crash_at_any_step_ends_in_exactly_one_order(
    make_rig: RigFactory, point: str, kind: str
) -> None:
    rig = make_rig()
    plan = plan_of(rig, kind)
    failpoints.arm(point)
    _crash(lambda: rig.runner().fire(plan, SLOT))
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED], outcomes
    assert len(rig.landed()) == _landed_for(rig, kind)
    (order,) = v2_orders(rig)
    run = rig.run(outcomes[0].run_id)
    assert run.signature == rig.landed()[-1].signature
    assert run.order_account == order.id
    if kind == "trigger-v2-cancel":
        assert order.state == "cancelled"
    assert recover(rig.runner(), startup=True) == []  # nothing left to do


@pytest.mark.parametrize("kind", KINDS)
def test_a_crash_after_signing_posts_the_same_deposit_or_withdrawal(
    make_rig: RigFactory, db_url: str, kind: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    plan = plan_of(rig, kind)
    failpoints.arm("after_sign")
    _crash(lambda: rig.runner().fire(plan, SLOT))
    (run_id,) = [r for r in rig.run_ids() if rig.run(r).status is RunStatus.SIGNED]
    signed = rig.run(run_id).signature
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert rig.run(run_id).signature == signed
    assert rig.landed()[-1].signature == signed
    assert len(rig.landed()) == _landed_for(rig, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_lost_after_landing_is_settled_from_the_history(
    make_rig: RigFactory, db_url: str, kind: str
) -> None:
    """The create (or confirm-cancel) landed and its answer was lost: the client
    posts the same body again, the API refuses the used request (or answers the
    first answer again), and the history shows our signature: one order."""
    rig = make_rig(loopback=True, db_url=db_url)
    plan = plan_of(rig, kind)
    operation = {"trigger-v2-dca": "trigger_v2_create_dca",
                 "trigger-v2-order": "trigger_v2_create_price",
                 "trigger-v2-cancel": "trigger_v2_confirm_cancel"}[kind]  # fmt: skip
    rig.emulator.faults.add("lost_answer", operation=operation)
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert requests(rig, operation) == 2
    assert len(rig.landed()) == _landed_for(rig, kind)
    (order,) = v2_orders(rig)
    assert rig.run(outcome.run_id).order_account == order.id
    if kind != "trigger-v2-order":  # a price order's create answers a retry itself
        assert "settled_by_history" in rig.steps(outcome.run_id)


def test_a_refused_create_with_no_order_in_the_history_fails_the_run(make_rig: RigFactory) -> None:
    rig = make_rig()
    plan = dca_plan(rig, inputAmount=39_000_000)  # 9.75 USDC a round: under the API's minimum
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.FAILED
    assert outcome.error is not None
    assert "Each order must be at least 10 USD" in outcome.error
    assert v2_orders(rig) == []
    assert rig.landed() == []
