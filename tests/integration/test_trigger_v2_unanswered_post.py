"""Trigger V2 creates and confirm-cancels the API leaves unanswered: every post of a
run carries the same signed deposit (or withdrawal), a run left `submitted` is settled
by recovery re-posting those bytes, and one deposit lands, once."""

from __future__ import annotations

import pytest

from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import KINDS, SLOT, plan_of, requests, v2_orders

OPERATION = {"trigger-v2-dca": "trigger_v2_create_dca",
             "trigger-v2-order": "trigger_v2_create_price",
             "trigger-v2-cancel": "trigger_v2_confirm_cancel"}  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_a_post_never_answered_is_re_posted_by_recovery_and_lands_once(
    make_rig: RigFactory, db_url: str, kind: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    plan = plan_of(rig, kind)
    before = len(rig.landed())
    operation = OPERATION[kind]
    rig.emulator.faults.add("server_error", count=4, operation=operation, status=503)
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.SUBMITTED, outcome
    signature = rig.run(outcome.run_id).signature
    assert len(rig.landed()) == before
    outcomes = recover(rig.runner(), runs=[outcome.run_id])
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED], outcomes
    assert rig.run(outcome.run_id).signature == signature
    assert [e.signature for e in rig.landed()[before:]] == [signature]
    assert requests(rig, operation) == 5
    assert len(v2_orders(rig)) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_without_the_order_id_after_landing_is_settled_without_a_second_deposit(
    make_rig: RigFactory, db_url: str, kind: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    plan = plan_of(rig, kind)
    before = len(rig.landed())
    rig.emulator.faults.add("drop_field", operation=OPERATION[kind], field="id")
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome
    assert requests(rig, OPERATION[kind]) == 2  # the unreadable answer, then the same post
    (order,) = v2_orders(rig)
    assert rig.run(outcome.run_id).order_account == order.id
    assert [e.signature for e in rig.landed()[before:]] == [rig.run(outcome.run_id).signature]
