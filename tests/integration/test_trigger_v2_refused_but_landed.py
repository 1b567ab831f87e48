"""A create whose first post the API answers with a 4xx, while the signed deposit it
was handed landed anyway: with an RPC node (``rpc.url``) the chain is asked before the
run is recorded as failed. Money that moved into the vault is never "failed, nothing
happened" on the API's word alone."""

from __future__ import annotations

from jupcron.domain import RunStatus
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, dca_plan, requests, v2_rig


def test_a_refused_create_whose_deposit_landed_is_settled_by_the_chain(
    make_rig: RigFactory, db_url: str
) -> None:
    _, rig = v2_rig(make_rig, db_url)
    rig.emulator.state.v2.refused_landed = 1
    rpc = rig.rpc()
    try:
        outcome = outcome_of(rig.runner(rpc=rpc).fire(dca_plan(rig), SLOT))
    finally:
        rpc.close()
    signature = rig.run(outcome.run_id).signature
    assert [e.signature for e in rig.landed()] == [signature]  # the deposit moved the money
    assert requests(rig, "trigger_v2_create_dca") == 1
    steps = rig.steps(outcome.run_id)
    assert "rpc_status" in steps, steps
    assert outcome.status is RunStatus.SUCCEEDED, (outcome, steps)
    assert steps[-1] == "settled_by_rpc"
