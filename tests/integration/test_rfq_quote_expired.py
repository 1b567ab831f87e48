"""RFQ -2003 "quote expired" from a swap execute: the JupiterZ market maker signs and
sends the fill itself (jup-ag/rfq-webhook-toolkit README: "MM: Sign and send Tx"), and
the docs give -2003 as "User did not respond in time or RFQ provider did not execute
in time"; the order engine takes the fill until its ``expire_at`` (programs/
order-engine, fill.rs). So after -2003 the transaction may still land: the run is
settled like a lost answer (the chain, or the same signed bytes), never ordered again.
On SQLite and PostgreSQL."""

from __future__ import annotations

from jupcron.domain import RunStatus
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_runner import SLOT

SWAP_APIS = (
    ("ultra-v1", "execute_ultra", "ultra_order"),
    ("swap-v2", "execute_swap", "swap_order"),
)


def test_a_quote_expired_answer_whose_fill_landed_is_not_ordered_again(
    make_rig: RigFactory, db_url: str
) -> None:
    for api, execute, order in SWAP_APIS:
        rig = make_rig(db_url=db_url, swap_api=api)
        # the maker sent the fill after the API stopped waiting: it lands, the answer is -2003
        rig.emulator.faults.add("timed_out", operation=execute, code=-2003, error="Quote expired")
        plan = rig.plan("swap", name=f"rfq-expired-{api}")
        outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, SLOT))
        run = rig.run(outcome.run_id)
        steps = rig.steps(run.id)
        assert len(rig.landed()) == 1  # one swap for one slot
        assert "reorder" not in steps, steps
        assert rig.emulator.ledger.requests.get(order, 0) == 1  # never ordered again
        assert run.status is RunStatus.SUCCEEDED, run.error
        assert rig.landed()[0].signature == run.signature
        assert steps[-1] == "settled_by_rpc"


def test_without_an_rpc_a_quote_expired_run_stays_unsettled_not_failed(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(swap_api="swap-v2")
    rig.emulator.faults.add(
        "timed_out", operation="execute_swap", code=-2003, error="Quote expired"
    )
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SUBMITTED  # it may have landed: neither failed nor re-ordered
    assert "execute_may_have_landed" in rig.steps(run.id)
    assert rig.emulator.ledger.requests.get("swap_order", 0) == 1
    assert len(rig.landed()) == 1
