"""The runner against the emulator: each kind end to end over loopback HTTP,
guard refusals, safety limits, failures and retries. Real store, real signer."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from solders.message import to_bytes_versioned
from solders.transaction import VersionedTransaction
from sqlalchemy import func, select

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from jupcron.runner.core import RunOptions
from jupcron.store.models import Run
from tests.fixtures.runner import SOL, USDC, RigFactory, outcome_of

# a slot ahead of the wall clock (the runner's own clock is the real one here), so
# its grace period cannot pass while the suite runs, whatever the day or hour
SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


@pytest.mark.parametrize("kind", ["recurring", "trigger-cancel", "swap"])
def test_each_kind_succeeds_over_loopback(make_rig: RigFactory, kind: str) -> None:
    rig = make_rig(loopback=True)
    plan = rig.plan(kind)
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    run = rig.run(outcome.run_id)
    landed = rig.landed()
    assert len(landed) == 1
    assert run.request_id == landed[0].request_id  # the emulator's requestId
    assert run.signature == landed[0].signature  # the signature the emulator verified
    assert run.signed_tx is not None
    assert run.unsigned_tx is not None
    # what was signed is the stored order's transaction (the one txguard judged): the
    # same message bytes, only a signature slot filled
    signed, unsigned = (base64.b64decode(t) for t in (run.signed_tx, run.unsigned_tx))
    assert len(signed) == len(unsigned)
    assert to_bytes_versioned(VersionedTransaction.from_bytes(signed).message) == (
        to_bytes_versioned(VersionedTransaction.from_bytes(unsigned).message)
    )
    assert run.status is RunStatus.SUCCEEDED
    assert rig.steps(run.id)[:4] == [
        "claimed",
        "attempt",
        "ordered",
        "attempt",
    ] or "signed" in rig.steps(run.id)
    if kind == "recurring":
        assert run.in_amount == "200000000"
        assert run.input_mint == USDC
        assert run.order_account  # the recurring order account from execute
    if kind == "swap":
        assert run.in_amount == "5000000"
        assert run.out_amount is not None
        assert int(run.out_amount) > 0
        assert run.slot is not None
    if kind == "trigger-cancel":
        assert run.order_account == plan.body["order"]
        assert rig.emulator.ledger.trigger_orders[plan.body["order"]].status == "Cancelled"


def test_a_second_fire_of_the_same_slot_orders_nothing(make_rig: RigFactory) -> None:
    rig = make_rig()
    plan = rig.plan("swap")
    runner = rig.runner()
    first = runner.fire(plan, SLOT)
    second = runner.fire(plan, SLOT)
    assert first is not None
    assert second is None
    assert rig.issued() == 1
    assert len(rig.landed()) == 1


def test_a_hostile_transaction_is_rejected_and_never_signed(make_rig: RigFactory) -> None:
    rig = make_rig()
    rig.emulator.faults.add("hostile")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.REJECTED
    run = rig.run(outcome.run_id)
    assert run.signed_tx is None
    assert run.signature is None
    assert run.error is not None
    assert "txguard refused" in run.error
    assert rig.landed() == []
    assert rig.emulator.ledger.requests.get("execute_ultra", 0) == 0


@pytest.mark.parametrize("where", ["global", "plan", "fire"])
def test_dry_run_goes_through_the_guard_and_signs_nothing(make_rig: RigFactory, where: str) -> None:
    rig = make_rig(safety={"dry_run": where == "global"})
    plan = rig.plan("recurring", settings={"dry_run": where == "plan"})
    options = RunOptions(dry_run=where == "fire")
    outcome = outcome_of(rig.runner().fire(plan, SLOT, options))
    assert outcome.status is RunStatus.DRY_RUN
    run = rig.run(outcome.run_id)
    assert run.request_id is not None  # it did ask for the order
    assert run.signed_tx is None
    assert rig.landed() == []
    assert rig.emulator.ledger.requests.get("execute_recurring", 0) == 0


def test_kill_switch_file_skips_before_any_request(make_rig: RigFactory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    switch = tmp_path / "STOP"
    rig = make_rig(safety={"kill_switch_file": str(switch)})
    plan = rig.plan("swap")
    switch.write_text("")
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error is not None
    assert "kill switch" in outcome.error
    assert rig.emulator.ledger.requests == {}
    switch.unlink()
    assert (
        outcome_of(rig.runner().fire(plan, SLOT + timedelta(hours=1))).status is RunStatus.SUCCEEDED
    )


def test_kill_switch_flag(make_rig: RigFactory) -> None:
    rig = make_rig(safety={"kill_switch": True})
    outcome = outcome_of(rig.runner().fire(rig.plan("recurring"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert rig.emulator.ledger.requests == {}


def test_plan_cap_per_day_counts_the_audit_trail(make_rig: RigFactory) -> None:
    rig = make_rig()
    plan = rig.plan("swap", settings={"caps": {"per_day": 12_000_000}})  # 5 USDC a run
    runner = rig.runner()
    statuses = [outcome_of(runner.fire(plan, SLOT + timedelta(hours=h))).status for h in range(3)]
    assert statuses == [RunStatus.SUCCEEDED, RunStatus.SUCCEEDED, RunStatus.SKIPPED]
    assert len(rig.landed()) == 2
    assert rig.emulator.ledger.requests.get("ultra_order") == 2


def test_mint_cap_from_config_spans_plans(make_rig: RigFactory) -> None:
    rig = make_rig(safety={"caps": [{"mint": USDC, "per_week": 7_000_000}]})
    runner = rig.runner()
    first = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    second = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    assert first.status is RunStatus.SUCCEEDED
    assert second.status is RunStatus.SKIPPED
    assert second.error is not None
    assert "per_week=7000000" in second.error
    assert len(rig.landed()) == 1


def test_max_in_amount_per_run(make_rig: RigFactory) -> None:
    rig = make_rig()
    outcome = outcome_of(
        rig.runner().fire(rig.plan("swap", settings={"max_in_amount": 1_000_000}), SLOT)
    )
    assert outcome.status is RunStatus.SKIPPED
    assert rig.emulator.ledger.requests == {}


def test_balance_check_skips_when_funds_are_short(make_rig: RigFactory) -> None:
    rig = make_rig(safety={"balance_check": True})
    rig.emulator.ledger.set_balance(rig.wallet.address, USDC, 1_000_000)  # 1 USDC < 5 USDC
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error is not None
    assert "insufficient balance" in outcome.error
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 0
    assert rig.landed() == []
    rig.emulator.ledger.set_balance(rig.wallet.address, USDC, 50_000_000)
    ok = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert ok.status is RunStatus.SUCCEEDED


@pytest.mark.parametrize(
    "asset",
    [{"address": USDC, "rawAmount": "12.5"}, {"address": USDC, "amount": {"ui": 50}}],
)
def test_balance_check_with_a_garbled_positions_answer_skips_the_run(
    make_rig: RigFactory, asset: dict[str, Any]
) -> None:
    """Before: the answer parsed, then its asset raised ValueError/TypeError out of
    `Runner.fire`; the run stayed pending and recovery met the same crash each pass."""
    rig = make_rig(safety={"balance_check": True})
    inner = rig.transport
    assert inner is not None

    class Garble(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = inner.handle_request(request)
            if "/positions/" not in request.url.path:
                return response
            body = json.loads(response.read())
            body["elements"] = [{"type": "multiple", "platformId": "wallet-tokens",
                                 "label": "Wallet", "data": {"assets": [{"data": asset}]}}]  # fmt: skip
            return httpx.Response(200, json=body)

    api = JupiterClient(rig.url, api_key=None, transport=Garble(), rate_limit=1000,
                        sleep=lambda s: None)  # fmt: skip
    try:
        outcome = outcome_of(rig.runner(api=api).fire(rig.plan("swap"), SLOT))
    finally:
        api.close()
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error is not None
    assert outcome.error.startswith("balance check failed: positions: unreadable answer")
    assert "elements.0.data.assets.0.data" in outcome.error
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 0
    assert rig.landed() == []


def test_execute_failed_is_final_with_code_and_text(make_rig: RigFactory) -> None:
    rig = make_rig()
    rig.emulator.faults.add(
        "failed",
        operation="execute_recurring",
        error="Insufficient funds for the operation requested.",
    )
    outcome = outcome_of(rig.runner().fire(rig.plan("recurring"), SLOT))
    assert outcome.status is RunStatus.FAILED
    run = rig.run(outcome.run_id)
    assert run.error is not None
    assert "Insufficient funds" in run.error
    assert run.signature is not None  # it was signed and posted, and refused


def test_swap_failing_with_a_cannot_land_code_is_ordered_afresh_once(make_rig: RigFactory) -> None:
    rig = make_rig()
    rig.emulator.faults.add(
        "failed", operation="execute_ultra", code=-1005, error="Transaction expired"
    )
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED
    steps = rig.steps(outcome.run_id)
    assert steps.count("reorder") == 1
    assert rig.issued() == 2
    assert len(rig.landed()) == 1
    assert rig.run(outcome.run_id).request_id == rig.landed()[0].request_id


def test_a_failed_attempt_is_stored_before_its_retry_an_answered_one_with_its_step(
    make_rig: RigFactory,
) -> None:
    rig = make_rig()
    rig.emulator.faults.add("server_error", operation="ultra_order")
    in_store: list[list[str]] = []  # the run's steps in the store as each attempt ends

    def on_attempt(attempt: Any) -> None:
        with rig.factory() as session:
            run_id = session.scalar(select(func.max(Run.id)))
        in_store.append(rig.steps(run_id))

    outcome = outcome_of(rig.runner(on_attempt=on_attempt).fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED
    assert in_store == [
        ["claimed", "attempt"],  # the 503: committed before the order is asked again
        ["claimed", "attempt"],  # the answered order: committed with `ordered` (below)
        ["claimed", "attempt", "attempt", "ordered", "signed", "submit"],
    ]
    run = rig.run(outcome.run_id)
    assert rig.steps(run.id) == [
        "claimed", "attempt", "attempt", "ordered", "signed", "submit", "attempt", "executed",
    ]  # fmt: skip
    assert run.attempts == 3


def test_swap_with_a_final_code_is_not_retried(make_rig: RigFactory) -> None:
    rig = make_rig()
    rig.emulator.faults.add(
        "failed", operation="execute_ultra", code=6001, error="Slippage tolerance exceeded"
    )
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.FAILED
    assert outcome.error_code == "6001"
    assert rig.issued() == 1


def test_an_order_the_api_will_not_build_is_skipped(make_rig: RigFactory) -> None:
    rig = make_rig()
    rig.emulator.ledger.set_balance(rig.wallet.address, USDC, 0)
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert rig.run(outcome.run_id).signed_tx is None


def test_transient_order_errors_are_retried_and_recorded(make_rig: RigFactory) -> None:
    rig = make_rig()
    rig.emulator.faults.add("rate_limit", operation="ultra_order", retry_after=0)
    rig.emulator.faults.add("server_error", operation="ultra_order")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED
    run = rig.run(outcome.run_id)
    assert run.attempts >= 4  # 3 order attempts + 1 execute
    assert rig.steps(run.id).count("attempt") == run.attempts


def test_order_refused_by_the_api_is_failed_and_nothing_signed(make_rig: RigFactory) -> None:
    rig = make_rig()
    small = {"time": {"inAmount": 20_000_000, "numberOfOrders": 2, "interval": 86400}}
    plan = rig.plan("recurring", request={"inputMint": USDC, "outputMint": SOL, "params": small})
    outcome = outcome_of(rig.runner().fire(plan, SLOT))
    assert outcome.status is RunStatus.FAILED
    run = rig.run(outcome.run_id)
    assert (run.signed_tx, run.error_code) == (None, "400")
    failed = [d for _, step, d in rig.events(run.id) if step == "order_failed"]
    assert failed[0]["http_status"] == 400  # the API's answer is kept: status and raw body
    assert "error" in failed[0]["body"]


def test_a_cancel_of_an_order_already_gone_is_skipped_not_failed(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)  # on SQLite and on PostgreSQL
    plan = rig.plan("trigger-cancel")
    first = outcome_of(rig.runner().fire(plan, SLOT))
    assert first.status is RunStatus.SUCCEEDED, first.error
    again = outcome_of(rig.runner().fire(plan, SLOT + timedelta(hours=1)))  # nothing left
    assert again.status is RunStatus.SKIPPED
    run = rig.run(again.run_id)
    assert (run.error_code, run.signed_tx) == ("order_gone", None)
    assert run.error is not None
    assert run.error.startswith("nothing to cancel")
    gone = [d for _, step, d in rig.events(run.id) if step == "order_gone"]
    assert gone[0]["http_status"] == 400  # the API's answer is kept


def test_a_lost_execute_answer_is_settled_by_reposting_the_same_bytes(make_rig: RigFactory) -> None:
    rig = make_rig()
    rig.emulator.faults.add("lost_answer", operation="execute_recurring")
    outcome = outcome_of(rig.runner().fire(rig.plan("recurring"), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED
    assert len(rig.landed()) == 1
    assert rig.run(outcome.run_id).signature == rig.landed()[0].signature


def test_caps_hold_when_runs_race_for_the_last_of_a_cap(make_rig: RigFactory, db_url: str) -> None:
    """Cap check and reservation are one serialized step: racing runs cannot both pass."""
    import threading

    rig = make_rig(db_url=db_url, safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})
    plans = [rig.plan("swap") for _ in range(4)]  # 5 USDC each: only one fits
    barrier = threading.Barrier(len(plans))
    outcomes = []

    def fire(plan):  # type: ignore[no-untyped-def]
        runner = rig.runner()
        barrier.wait()
        outcomes.append(runner.fire(plan, SLOT))

    threads = [threading.Thread(target=fire, args=(p,)) for p in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(str(outcome_of(o).status) for o in outcomes)
    assert statuses == ["skipped", "skipped", "skipped", "succeeded"]
    assert len(rig.landed()) == 1


def test_recovered_runs_say_so_in_their_events(make_rig: RigFactory) -> None:
    from jupcron import failpoints
    from jupcron.runner.recovery import recover

    rig = make_rig()
    failpoints.arm("after_sign")
    try:
        with pytest.raises(failpoints.SimulatedCrash):
            rig.runner().fire(rig.plan("swap"), SLOT)
    finally:
        failpoints.disarm()
    (outcome,) = recover(rig.runner(), startup=True)
    assert "recovery" in rig.steps(outcome.run_id)
