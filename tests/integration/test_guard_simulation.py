"""Simulate before signing (rpc.url set): the runner asks the node what the
transaction would do to our balances and refuses any loss beyond the order.
The emulator's RPC simulates what it issued, from its ledger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from jupcron.chain.rpc import SolanaRpc
from jupcron.domain import RunStatus
from jupcron.emulator.faults import FaultKind
from tests.fixtures.runner import USDC, Rig, RigFactory, outcome_of

USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"


def _slot() -> datetime:
    """A slot ahead of the wall clock (the runner's clock is the real one here)."""
    return (datetime.now(UTC) + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)


def _simulation(rig: Rig, run_id: int, step: str) -> list[Any]:
    (detail,) = [d for _, s, d in rig.events(run_id) if s == step]
    return list(detail.get("simulation") or [])


@pytest.mark.parametrize("kind", ["swap", "recurring"])
def test_a_legit_order_passes_its_simulation(make_rig: RigFactory, kind: str) -> None:
    rig = make_rig()
    plan = rig.plan(kind)
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, _slot()))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    diff = _simulation(rig, outcome.run_id, "signed")
    # what the node said the order does: the input leaves, nothing else of ours does
    me = rig.wallet.address
    assert any(f" {USDC}: " in line and "(-" in line for line in diff), diff
    assert any(line.startswith(f"{me} SOL:") for line in diff), diff
    assert not any(USDT in line for line in diff)


def test_a_drain_hidden_inside_the_program_call_is_refused_by_the_balance_diff(
    make_rig: RigFactory,
) -> None:
    rig = make_rig()
    plan = rig.plan("swap")
    rig.emulator.faults.add(FaultKind.HIDDEN_DRAIN, operation="ultra_order")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, _slot()))
    assert outcome.status is RunStatus.REJECTED
    assert f"the wallet would lose 100000000000 of mint {USDT}" in (outcome.error or "")
    run = rig.run(outcome.run_id)
    assert run.signature is None
    assert run.signed_tx is None
    assert rig.landed() == []
    diff = _simulation(rig, outcome.run_id, "guard_refused")
    assert any("-> 0 (-100000000000)" in line for line in diff), diff


def test_the_same_drain_passes_the_static_rules_alone(make_rig: RigFactory) -> None:
    """Why simulation is needed: without an RPC the hidden drain is not visible."""
    rig = make_rig()
    plan = rig.plan("swap")
    rig.emulator.faults.add(FaultKind.HIDDEN_DRAIN, operation="ultra_order")
    outcome = outcome_of(rig.runner().fire(plan, _slot()))
    assert outcome.status is RunStatus.SUCCEEDED  # signed: the static rules could not see it


def test_an_unreachable_rpc_means_nothing_is_signed(make_rig: RigFactory) -> None:
    """The RPC serves both price protection and simulation: with the reference's
    policy at `warn` (so price protection does not refuse first), simulation cannot
    run, and nothing is signed; under the default `refuse`, price protection refuses."""
    rig = make_rig()
    rig.config = rig.config.model_copy(
        update={"price": rig.config.price.model_copy(update={"on_stale": "warn"})}
    )
    plan = rig.plan("swap")

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    rpc = SolanaRpc("http://127.0.0.1:9/rpc", transport=httpx.MockTransport(refuse))
    outcome = outcome_of(rig.runner(rpc=rpc).fire(plan, _slot()))
    assert outcome.status is RunStatus.REJECTED
    assert "simulation unavailable, so nothing is signed" in (outcome.error or "")
    assert rig.run(outcome.run_id).signature is None
    assert rig.landed() == []
    rig.config = rig.config.model_copy(
        update={"price": rig.config.price.model_copy(update={"on_stale": "refuse"})}
    )
    refused = outcome_of(rig.runner(rpc=rpc).fire(rig.plan("swap"), _slot()))
    assert refused.status is RunStatus.REJECTED
    assert "no usable reference price" in (refused.error or "")
    assert rig.landed() == []


def test_simulation_can_be_turned_off(make_rig: RigFactory) -> None:
    rig = make_rig(guard={"simulate": False})
    plan = rig.plan("swap")
    rig.emulator.faults.add(FaultKind.HIDDEN_DRAIN, operation="ultra_order")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, _slot()))
    assert outcome.status is RunStatus.SUCCEEDED
    assert _simulation(rig, outcome.run_id, "signed") == []
