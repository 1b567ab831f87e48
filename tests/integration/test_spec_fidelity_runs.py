"""Runs where the API answers as its spec allows (issue 30), over loopback HTTP
with the emulator, on SQLite and PostgreSQL: a Swap V2 order answered with only
an ``error`` is skipped with that reason; Trigger V2's "not yet marked ready to
cancel. Retry shortly" is retried (bounded, each attempt recorded); each swap API
is sent only the parameters its spec lists."""

from __future__ import annotations

from typing import Any

from jupcron.store.types import RunStatus
from tests.fixtures.runner import REQUESTS, Rig, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, cancel_plan, order_plan


def _attempts(rig: Rig, run_id: int, operation: str) -> list[dict[str, Any]]:
    return [d for _, step, d in rig.events(run_id)
            if step == "attempt" and d.get("operation") == operation]  # fmt: skip


def test_a_swap_v2_order_answered_with_only_an_error_is_skipped_with_its_reason(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url, swap_api="swap-v2")
    rig.emulator.faults.extend([{"kind": "order_error", "operation": "swap_order",
                                 "params": {"error": "No routes found"}}])  # fmt: skip
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    run = rig.run(outcome.run_id)
    assert run.error == "order not possible: No routes found"
    assert "order_declined" in rig.steps(run.id)
    assert rig.landed() == []
    assert len(_attempts(rig, run.id, "swap_order")) == 1  # an answer, not a parse error


def _open_price_order(rig: Rig) -> str:
    outcome = outcome_of(rig.runner().fire(order_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    order = rig.run(outcome.run_id).order_account
    assert order is not None
    return order


def test_a_price_cancel_not_ready_yet_is_retried_then_withdraws(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    order_id = _open_price_order(rig)
    rig.emulator.faults.extend([{"kind": "not_ready", "operation": "trigger_v2_cancel",
                                 "count": 2}])  # fmt: skip
    outcome = outcome_of(rig.runner().fire(cancel_plan(rig, order_id, "price"), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    attempts = _attempts(rig, outcome.run_id, "trigger_v2_cancel")
    assert [a["http_status"] for a in attempts] == [400, 400, 200]
    assert all("ApiRetryLaterError" in a["error"] for a in attempts[:2])


def test_a_price_cancel_never_ready_fails_after_the_bounded_retries(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    order_id = _open_price_order(rig)
    rig.emulator.faults.extend([{"kind": "not_ready", "operation": "trigger_v2_cancel",
                                 "count": 0}])  # fmt: skip
    outcome = outcome_of(rig.runner().fire(cancel_plan(rig, order_id, "price"), SLOT))
    assert outcome.status is RunStatus.FAILED
    assert "ready to cancel" in (rig.run(outcome.run_id).error or "")
    attempts = _attempts(rig, outcome.run_id, "trigger_v2_cancel")
    assert len(attempts) == rig.config.api.max_attempts
    assert {a["http_status"] for a in attempts} == {400}


def test_swap_v2_only_parameters_are_not_sent_to_ultra(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(loopback=True, db_url=db_url, swap_api="ultra-v1")
    plan = rig.plan("swap", {**REQUESTS["swap"], "slippageBps": 50, "swapMode": "ExactIn"})
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    (ordered,) = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    assert ordered["not_sent"] == ["slippageBps", "swapMode"]
