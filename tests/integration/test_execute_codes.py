"""Execute answers that say the transaction was sent but not what became of it
(-1006 "attempted, timed out"; -2005 RFQ internal error) are settled like a lost
answer: from the chain, or by re-posting the same signed bytes, never recorded
`failed` and never ordered again. On SQLite and PostgreSQL."""

from __future__ import annotations

from jupcron.runner.recovery import recover
from jupcron.store.types import RunStatus
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_runner import SLOT

SWAP_APIS = (
    ("ultra-v1", "execute_ultra", "ultra_order"),
    ("swap-v2", "execute_swap", "swap_order"),
)


def test_a_timed_out_execute_that_landed_is_succeeded_once_from_the_chain(
    make_rig: RigFactory, db_url: str
) -> None:
    for api, execute, order in SWAP_APIS:
        rig = make_rig(db_url=db_url, swap_api=api)
        rig.emulator.faults.add("timed_out", operation=execute)
        plan = rig.plan("swap", name=f"timed-out-{api}")
        outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, SLOT))
        run = rig.run(outcome.run_id)
        assert run.status is RunStatus.SUCCEEDED, run.error
        steps = rig.steps(run.id)
        assert "execute_may_have_landed" in steps
        assert "reorder" not in steps
        assert steps[-1] == "settled_by_rpc"
        assert len(rig.landed()) == 1
        assert rig.landed()[0].signature == run.signature
        assert rig.emulator.ledger.requests.get(order, 0) == 1  # never ordered again


def test_without_an_rpc_the_same_bytes_are_posted_again_and_settle_it(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    rig.emulator.faults.add("timed_out", operation="execute_ultra")
    runner = rig.runner()
    outcome = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SUBMITTED  # not failed: it may have landed
    assert run.error is None
    (settled,) = recover(runner, startup=True)
    assert settled.status is RunStatus.SUCCEEDED
    final = rig.run(run.id)
    assert final.signature == run.signature  # the same signed bytes
    assert len(rig.landed()) == 1
    assert "reorder" not in rig.steps(run.id)
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 1


def test_a_code_after_which_nothing_landed_is_failed_with_its_meaning(make_rig: RigFactory) -> None:
    """-1002 (invalid transaction): the API's own word, and the documented meaning when
    the answer carries no text."""
    rig = make_rig()
    rig.emulator.faults.add("failed", operation="execute_ultra", code=-1002, error="")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.FAILED
    assert run.error_code == "-1002"
    assert run.error == "invalid transaction"
    assert rig.landed() == []
