"""A price-order create answered ``200`` with ``depositConfirmed: false`` (the spec:
"whether the deposit has landed and the order is active") has not shown that the
signed deposit landed: the run must not be recorded as succeeded on it. It is settled
as an unanswered post is: from the chain (``rpc.url``), else ``in_doubt``."""

from __future__ import annotations

from jupcron.chain.rpc import SolanaRpc
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from tests.fixtures.runner import Clock, Rig, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, order_plan, requests, v2_orders, v2_rig

PAST_EXPIRY = 600  # seconds: well past the deposit's blockhash (90 s and a third)


def _rig(make_rig: RigFactory, db_url: str) -> tuple[Clock, Rig]:
    clock, rig = v2_rig(make_rig, db_url)
    rig.emulator.state.v2.unconfirmed = 2  # the create, and its re-post by recovery
    return clock, rig


def test_an_unconfirmed_deposit_is_settled_from_the_chain_not_recorded_succeeded(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = _rig(make_rig, db_url)
    rpc = rig.rpc()
    try:
        _settled_from_the_chain(clock, rig, rpc)
    finally:
        rpc.close()


def _settled_from_the_chain(clock: Clock, rig: Rig, rpc: SolanaRpc) -> None:
    plan = order_plan(rig)
    outcome = outcome_of(rig.runner(rpc=rpc).fire(plan, SLOT))
    signature = rig.run(outcome.run_id).signature
    (order,) = v2_orders(rig)
    assert order.state == "depositing"  # shown "pending": submitted, not seen landing
    assert rig.landed() == []
    assert outcome.status is RunStatus.SUBMITTED, outcome
    steps = rig.steps(outcome.run_id)
    assert "deposit_unconfirmed" in steps, steps
    assert "rpc_status" in steps, steps
    clock.advance(PAST_EXPIRY)
    (settled,) = recover(rig.runner(rpc=rpc), runs=[outcome.run_id])
    assert settled.status is RunStatus.FAILED, settled
    run = rig.run(outcome.run_id)
    assert run.signature == signature
    assert run.order_account == order.id  # kept from the answer, for the follower
    assert run.error == "blockhash expired and the signature never landed"
    assert requests(rig, "trigger_v2_create_price") == 2


def test_without_an_rpc_node_an_unconfirmed_deposit_ends_in_doubt(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = _rig(make_rig, db_url)
    outcome = outcome_of(rig.runner().fire(order_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUBMITTED, outcome
    clock.advance(PAST_EXPIRY)
    (settled,) = recover(rig.runner(), runs=[outcome.run_id])
    assert settled.status is RunStatus.IN_DOUBT, settled
    assert rig.landed() == []
