"""Trigger V2 runs end to end against the emulator over real loopback HTTP, on
SQLite and PostgreSQL: a DCA, a price order, a cancel; the JWT reused, refreshed
when it runs out, and never stored."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from tests.fixtures.runner import SOL, USDC, Clock, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import (
    SLOT,
    cancel_plan,
    dca_plan,
    jwts,
    open_dca,
    order_plan,
    requests,
    stored_text,
    v2_orders,
)


@pytest.fixture(autouse=True)
def _disarmed() -> Iterator[None]:
    yield
    failpoints.disarm()


def test_a_dca_plan_deposits_into_the_vault_and_opens_the_order(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    before = rig.emulator.ledger.balance(rig.wallet.address, USDC)
    outcome = outcome_of(rig.runner().fire(dca_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    run = rig.run(outcome.run_id)
    (order,) = v2_orders(rig)
    assert run.order_account == order.id
    assert run.signature == order.deposit_signature  # our signed deposit, landed once
    assert [e.signature for e in rig.landed()] == [run.signature]
    assert (order.family, order.state, order.amount, order.order_count) == (
        "dca",
        "active",
        40_000_000,
        4,
    )
    vault = rig.emulator.state.v2.vaults[rig.wallet.address]
    assert order.vault == vault
    assert rig.emulator.ledger.balance(rig.wallet.address, USDC) == before - 40_000_000
    assert rig.emulator.ledger.balance(vault, USDC) == 40_000_000
    steps = rig.steps(run.id)
    assert steps.index("ordered") < steps.index("signed") < steps.index("executed")
    ordered = next(d for _, s, d in rig.events(run.id) if s == "ordered")
    assert ordered["vault"] == vault
    for token in jwts(rig):
        assert token not in stored_text(rig)


def test_a_price_order_plan_opens_a_single_order_that_expires_after_its_duration(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    outcome = outcome_of(rig.runner().fire(order_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    (order,) = v2_orders(rig)
    assert (order.family, order.state, order.input_mint, order.amount) == (
        "price",
        "open",
        SOL,
        200_000_000,
    )
    assert (order.trigger_condition, order.trigger_price_usd) == ("above", 200.0)
    fired_ms = int(rig.emulator.state.clock() * 1000)
    assert abs(order.expires_at_ms - fired_ms - 7 * 86_400_000) < 60_000  # 7 days from the fire
    assert rig.run(outcome.run_id).order_account == order.id


def test_a_cancel_plan_withdraws_the_rest_to_the_wallet(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    order_id = open_dca(rig)
    before = rig.emulator.ledger.balance(rig.wallet.address, USDC)
    outcome = outcome_of(rig.runner().fire(cancel_plan(rig, order_id), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    (order,) = v2_orders(rig)
    assert order.state == "cancelled"
    # the first round was due at once: the keeper filled it; the other three come back
    assert rig.emulator.ledger.balance(rig.wallet.address, USDC) == before + 30_000_000
    assert rig.emulator.ledger.balance(order.vault, USDC) == 0
    run = rig.run(outcome.run_id)
    withdrawal = [e for e in order.events if e["type"] == "withdrawal"]
    assert [e["txSignature"] for e in withdrawal] == [run.signature]
    assert run.order_account == order_id
    assert len(rig.landed()) == 2  # the deposit, then the withdrawal


def test_one_login_serves_many_runs_and_a_new_one_follows_its_expiry(make_rig: RigFactory) -> None:
    clock = Clock(SLOT)
    rig = make_rig(clock=clock, emulator=Emulator(seed=3, clock=clock.wall, jwt_ttl=3600))
    runner = rig.runner()
    for _ in range(2):
        assert outcome_of(runner.fire(dca_plan(rig), SLOT)).status is RunStatus.SUCCEEDED
    assert requests(rig, "trigger_v2_verify") == 1
    clock.advance(3600)  # the JWT has run out
    plan = dca_plan(rig)
    assert outcome_of(runner.fire(plan, SLOT)).status is RunStatus.SUCCEEDED
    assert requests(rig, "trigger_v2_verify") == 2
    assert requests(rig, "trigger_v2_register_vault") == 1  # one vault for the wallet


def test_a_jwt_that_runs_out_mid_run_is_fetched_again_before_the_create(
    make_rig: RigFactory, db_url: str
) -> None:
    """The clock passes the JWT's expiry between the deposit and the create: the
    client logs in again and the run goes on, one order, one deposit landed."""
    clock = Clock(SLOT)
    rig = make_rig(
        clock=clock, db_url=db_url, emulator=Emulator(seed=3, clock=clock.wall, jwt_ttl=120)
    )

    def age(attempt: object) -> None:
        if getattr(attempt, "operation", "") == "trigger_v2_deposit":
            clock.advance(70)  # 120 s JWT, refreshed a minute early: now it is stale

    outcome = outcome_of(rig.runner(on_attempt=age).fire(dca_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert requests(rig, "trigger_v2_verify") == 2
    assert requests(rig, "trigger_v2_create_dca") == 1
    assert len(v2_orders(rig)) == 1
    assert len(rig.landed()) == 1


def test_a_jwt_the_api_refuses_mid_run_is_fetched_again_and_the_call_made_once_more(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    rig.emulator.faults.add("jwt_expired", operation="trigger_v2_create_dca")
    outcome = outcome_of(rig.runner().fire(dca_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert requests(rig, "trigger_v2_verify") == 2
    assert requests(rig, "trigger_v2_create_dca") == 2
    assert len(v2_orders(rig)) == 1
    assert len(rig.landed()) == 1
    attempts = [d for _, s, d in rig.events(outcome.run_id) if s == "attempt"]
    assert [a["http_status"] for a in attempts if a["operation"] == "trigger_v2_create_dca"] == [
        401,
        200,
    ]


def test_a_cancel_of_an_order_already_closed_is_skipped_not_failed(
    make_rig: RigFactory, db_url: str
) -> None:
    """The plan's aim holds when its order is already cancelled (or completed, filled):
    the run is `skipped` as `order_gone`, as v1's cancels are, and nothing is crafted or
    signed (it failed on the API's refusal, and said `failed` at every fire)."""
    rig = make_rig(loopback=True, db_url=db_url)
    order_id = open_dca(rig)
    plan = cancel_plan(rig, order_id)
    first = outcome_of(rig.runner().fire(plan, SLOT))
    assert first.status is RunStatus.SUCCEEDED, first.error
    crafted = rig.emulator.ledger.requests.get("trigger_v2_cancel", 0)
    again = outcome_of(rig.runner().fire(plan, SLOT + timedelta(hours=1)))
    assert again.status is RunStatus.SKIPPED, again.error
    assert again.error_code == "order_gone"
    assert again.error == f"nothing to cancel: order {order_id} is already cancelled"
    assert rig.emulator.ledger.requests.get("trigger_v2_cancel", 0) == crafted
    assert rig.run(again.run_id).signed_tx is None
    assert len(rig.landed()) == 2  # the deposit and the first withdrawal only


def test_a_cancel_simulated_by_the_rpc_node_is_signed(make_rig: RigFactory, db_url: str) -> None:
    """With `rpc.url` set every transaction is simulated before signing (`guard.simulate`,
    on by default). The emulator's simulation took a Trigger V2 withdrawal for a deposit
    (the wallet losing what comes back), so every cancel was refused there and no test
    ran one with a node: the withdrawal credits the wallet, as on chain."""
    rig = make_rig(loopback=True, db_url=db_url)
    order_id = open_dca(rig)
    before = rig.emulator.ledger.balance(rig.wallet.address, USDC)
    rpc = rig.rpc()
    try:
        outcome = outcome_of(rig.runner(rpc=rpc).fire(cancel_plan(rig, order_id), SLOT))
    finally:
        rpc.close()
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert "simulation" in str(rig.events(outcome.run_id))
    assert rig.emulator.ledger.balance(rig.wallet.address, USDC) == before + 30_000_000
