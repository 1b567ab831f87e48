"""A Trigger V2 create or confirm-cancel answered ``200`` whose ``txSignature`` is not
our signed transaction's signature. The spec (jup-ag/docs openapi-spec/trigger/v2/
trigger.yaml: ``OrderResponse.txSignature`` "On-chain signature of the deposit
transaction"; ``TxSignatureResponse``: "DCA create (deposit signature) and
confirm-cancel (withdrawal signature)") names the transaction we signed, whose id is
our wallet's signature (txguard holds the wallet to be the fee payer). An answer
naming another one does not show that ours landed: the run is settled from the chain
by OUR signature, as an unanswered post is, never recorded succeeded on that word.
On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from jupcron.chain.rpc import SolanaRpc
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from tests.fixtures.runner import USDC, Rig, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import (
    SLOT,
    cancel_plan,
    dca_plan,
    open_dca,
    order_plan,
    v2_orders,
    v2_rig,
)

PAST_EXPIRY = 600  # seconds: well past the signed transaction's blockhash


def _with_rpc(rig: Rig) -> SolanaRpc:
    return rig.rpc()


def test_a_dca_create_naming_another_signature_is_not_recorded_succeeded(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = v2_rig(make_rig, db_url)
    rig.emulator.state.v2.misreported = 1
    rpc = _with_rpc(rig)
    try:
        before = rig.emulator.ledger.balance(rig.wallet.address, USDC)
        outcome = outcome_of(rig.runner(rpc=rpc).fire(dca_plan(rig), SLOT))
        (order,) = v2_orders(rig)
        assert rig.landed() == []  # nothing of our signed deposit landed
        assert rig.emulator.ledger.balance(rig.wallet.address, USDC) == before
        assert outcome.status is not RunStatus.SUCCEEDED, outcome
        assert outcome.status is RunStatus.SUBMITTED, outcome
        run = rig.run(outcome.run_id)
        assert run.order_account == order.id  # kept from the answer, for the follower
        steps = rig.steps(outcome.run_id)
        assert "signature_mismatch" in steps, steps
        mismatch = next(d for _, s, d in rig.events(run.id) if s == "signature_mismatch")
        assert mismatch["ours"] == run.signature
        assert mismatch["api"] != run.signature
        clock.advance(PAST_EXPIRY)
        (settled,) = recover(rig.runner(rpc=rpc), runs=[outcome.run_id])
        assert settled.status is RunStatus.FAILED, settled
        assert rig.run(outcome.run_id).error == "blockhash expired and the signature never landed"
    finally:
        rpc.close()


def test_a_price_create_naming_another_signature_ends_in_doubt_without_an_rpc_node(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = v2_rig(make_rig, db_url)
    rig.emulator.state.v2.misreported = 1  # its re-post answers the same (idempotent retry)
    outcome = outcome_of(rig.runner().fire(order_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUBMITTED, outcome
    clock.advance(PAST_EXPIRY)
    (settled,) = recover(rig.runner(), runs=[outcome.run_id])
    assert settled.status is RunStatus.IN_DOUBT, settled
    assert rig.landed() == []


def test_a_create_that_landed_but_names_another_signature_is_settled_succeeded_by_ours(
    make_rig: RigFactory, db_url: str
) -> None:
    """The chain, asked for OUR signature, settles it: landed, so succeeded (the
    mismatch stays in the run's events)."""
    _, rig = v2_rig(make_rig, db_url)
    rig.emulator.state.v2.misreported_landed = 1
    rpc = _with_rpc(rig)
    try:
        outcome = outcome_of(rig.runner(rpc=rpc).fire(dca_plan(rig), SLOT))
        assert outcome.status is RunStatus.SUCCEEDED, outcome
        run = rig.run(outcome.run_id)
        (order,) = v2_orders(rig)
        assert [e.signature for e in rig.landed()] == [run.signature]
        assert run.order_account == order.id
        steps = rig.steps(run.id)
        assert "signature_mismatch" in steps, steps
        assert "settled_by_rpc" in steps, steps
    finally:
        rpc.close()


def test_a_confirm_cancel_naming_another_signature_is_not_recorded_succeeded(
    make_rig: RigFactory, db_url: str
) -> None:
    """Without an RPC node, nothing can settle it: submitted, then in doubt."""
    clock, rig = v2_rig(make_rig, db_url)
    order_id = open_dca(rig)
    rig.emulator.state.v2.misreported = 1
    outcome = outcome_of(rig.runner().fire(cancel_plan(rig, order_id), SLOT))
    (order,) = v2_orders(rig)
    assert order.state == "withdrawing"  # nothing withdrawn
    assert len(rig.landed()) == 1  # the deposit only
    assert outcome.status is RunStatus.SUBMITTED, outcome
    assert "signature_mismatch" in rig.steps(outcome.run_id)
    assert rig.run(outcome.run_id).order_account == order_id
    clock.advance(PAST_EXPIRY)
    (settled,) = recover(rig.runner(), runs=[outcome.run_id])
    assert settled.status is RunStatus.IN_DOUBT, settled


def test_a_landed_confirm_cancel_answered_with_another_orders_id_keeps_the_order_cancelled(
    make_rig: RigFactory, db_url: str
) -> None:
    """The run is about the order the plan cancels: an answer naming another id (our
    withdrawal landed, by our signature) must not point the run, and the follower
    reading it, at an order the plan never named."""
    _, rig = v2_rig(make_rig, db_url)
    order_id = open_dca(rig)
    rig.emulator.state.v2.misnamed = 1
    outcome = outcome_of(rig.runner().fire(cancel_plan(rig, order_id), SLOT))
    (order,) = v2_orders(rig)
    assert order.state == "cancelled"
    assert outcome.status is RunStatus.SUCCEEDED, outcome
    assert rig.run(outcome.run_id).order_account == order_id
