"""Execute answers shaped as the swap specs allow. Swap V2's (openapi-spec/swap/v2/
swap.yaml) makes every field optional, each swap event's too (its ``SwapEvent`` schema
requires none); a landed swap's answer whose events lack a fact, or says
``swapEvents: null``, is still its answer: read, and the run settled from it, not made
unreadable (then settled as a lost answer: the chain, or ``in_doubt`` without a node).
An incomplete event is left out of the events read, never read with a 0 amount; the
stored answer keeps it as sent. A fact of the wrong type is still refused."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from jupcron.api.models import ExecuteResult
from jupcron.domain import RunStatus
from jupcron.store.results import results_of
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_runner import SLOT

LANDED: dict[str, Any] = {
    "status": "Success", "signature": "5UfD", "slot": "324307186", "code": 0,
    "totalInputAmount": "100000000", "totalOutputAmount": "17057460",
    "inputAmountResult": "100000000", "outputAmountResult": "17057460",
}  # fmt: skip
EVENT = {"inputMint": "So11", "inputAmount": "100000000", "outputMint": "EPjF",
         "outputAmount": "17057460"}  # fmt: skip


@pytest.mark.parametrize("api", ["swap-v2", "ultra-v1"])
def test_a_landed_swap_whose_events_lack_an_amount_is_succeeded_from_its_answer(
    make_rig: RigFactory, db_url: str, api: str
) -> None:
    rig = make_rig(db_url=db_url, swap_api=api)
    execute = "execute_swap" if api == "swap-v2" else "execute_ultra"
    # every answer (a re-post's too) without the events' outputAmount (totalOutputAmount
    # is another key)
    rig.emulator.faults.add("drop_field", count=100, operation=execute, field="outputAmount")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))  # no RPC node
    run = rig.run(outcome.run_id)
    steps = rig.steps(run.id)
    assert run.status is RunStatus.SUCCEEDED, (run.status, run.error, steps)
    assert steps[-1] == "executed", steps
    assert "execute_unanswered" not in steps
    (landed,) = rig.landed()
    assert run.signature == landed.signature
    assert run.out_amount == str(landed.out_amount)  # the answer's totalOutputAmount
    with rig.factory() as session:
        (result,) = results_of(session, run.id)
    assert result["swap_events"] == []  # none read with a made-up amount
    answered = result["answer"]["swapEvents"]  # the answer kept as it came
    assert answered
    assert all("outputAmount" not in e for e in answered)


@pytest.mark.parametrize(
    "events",
    [
        None,
        [{**EVENT, "outputAmount": None}],
        [{k: v for k, v in EVENT.items() if k != "inputMint"}],
    ],
)
def test_spec_shaped_events_leave_the_answer_readable(events: Any) -> None:
    got = ExecuteResult.model_validate(
        {**LANDED, "swapEvents": events, "operation": "execute_swap"}
    )
    assert got.succeeded
    assert got.swap_events == []
    assert (got.input_amount, got.output_amount) == ("100000000", "17057460")


def test_complete_events_are_read_and_incomplete_ones_left_out() -> None:
    partial = {k: v for k, v in EVENT.items() if k != "inputAmount"}
    got = ExecuteResult.model_validate({**LANDED, "swapEvents": [EVENT, partial]})
    (event,) = got.swap_events
    assert (event.input_amount, event.output_amount) == ("100000000", "17057460")


def test_an_answer_without_amounts_reads_none_never_zero() -> None:
    got = ExecuteResult.model_validate({"status": "Success", "code": 0, "signature": "5UfD"})
    assert got.succeeded
    assert (got.input_amount, got.output_amount) == (None, None)
    assert (got.input_amount_result, got.output_amount_result) == (None, None)
    assert got.swap_events == []


def test_an_event_fact_of_the_wrong_type_is_still_refused() -> None:
    with pytest.raises(ValidationError):
        ExecuteResult.model_validate({**LANDED, "swapEvents": [{**EVENT, "inputAmount": "1.5"}]})
