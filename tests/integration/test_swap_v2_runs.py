"""Swap V2 runs end to end against the emulator, on SQLite and PostgreSQL: the
order's lastValidBlockHeight recorded and passed back on execute, results in
the audit and the report, the API chosen by config or plan, skipped and
hostile orders, crashes after signing, and an order whose height passed
before its signed transaction was posted (by the RPC's block height, or the
time fallback without one)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from jupcron import failpoints
from jupcron.chain.rpc import SolanaRpc
from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.emulator.common import VALID_BLOCKS
from jupcron.emulator.server import EmulatorServer
from jupcron.runner.recovery import recover
from jupcron.store.engine import begin
from jupcron.store.results import results_of
from tests.fixtures.emulator import SWAP_REQUEST, ClientFactory, Recorder, sign
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.runner import USDC, Clock, Rig, RigFactory, outcome_of

# a slot ahead of the wall clock, so its grace cannot pass while the suite runs
SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
V2 = "swap-v2"


@pytest.fixture(autouse=True)
def _disarm() -> Any:
    yield
    failpoints.disarm()


def crash(fire: Any) -> None:
    with pytest.raises(failpoints.SimulatedCrash):
        fire()


def ordered(rig: Rig, run_id: int) -> list[dict[str, Any]]:
    return [d for _, step, d in rig.events(run_id) if step == "ordered"]


def requests(rig: Rig) -> dict[str, int]:
    """The API calls the emulator served (its Solana RPC aside)."""
    return {k: v for k, v in rig.emulator.ledger.requests.items() if k != "rpc"}


def advance_blocks(rig: Rig, blocks: int) -> None:
    answer = rig.emulator.handle("POST", "/_emulator/blocks", {}, {},
                                 json.dumps({"advance": blocks}).encode())  # fmt: skip
    assert answer.status == 200


def test_a_swap_v2_run_passes_its_height_back_and_is_audited_and_reported(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, swap_api=V2)
    rig = f.rig
    height = rig.emulator.state.block_height()
    plan = rig.plan("swap", name="v2-swap")
    run_id = f.fire(plan)
    run = rig.run(run_id)
    (detail,) = ordered(rig, run_id)
    assert detail["api"] == V2
    assert detail["last_valid_block_height"] == height + VALID_BLOCKS
    issued = rig.emulator.ledger.issued[run.request_id or ""]
    assert issued.extra["last_valid_block_height"] == detail["last_valid_block_height"]
    assert requests(rig) == {"swap_order": 1, "execute_swap": 1}  # never Ultra's paths
    (landed,) = rig.landed()
    assert (run.signature, run.request_id) == (landed.signature, landed.request_id)
    with begin(f.engine) as conn:
        (result,) = results_of(conn, run_id)
    assert (result["operation"], result["status"], result["code"]) == ("execute_swap", "Success",
                                                                       "0")  # fmt: skip
    assert result["total_input_amount"] == "5000000"
    audit = f.sql("SELECT kind, status, signature, spent, received, fills FROM audit "
                  "WHERE run_id = :r", r=run_id)  # fmt: skip
    assert audit == [{"kind": "swap", "status": "succeeded", "signature": run.signature,
                      "spent": "5000000", "received": result["total_output_amount"],
                      "fills": 1}]  # fmt: skip
    report = f.report("v2-swap")
    assert report.spent == 5_000_000
    assert report.received == int(result["total_output_amount"])
    assert report.fees == {USDC: 5_000_000 - int(result["input_amount_result"])}
    assert [r["source"] for r in f.fills("v2-swap")] == ["execute"]


def test_swap_v2_over_loopback_needs_the_api_key(make_rig: RigFactory) -> None:
    from pydantic import SecretStr

    from jupcron.api.client import JupiterClient
    from jupcron.errors import ApiAuthError

    rig = make_rig(loopback=True, swap_api=V2, emulator=Emulator(seed=4, api_key="k"))
    with pytest.raises(ApiAuthError):  # the rig's client sends no key: 401 stops the daemon
        rig.runner().fire(rig.plan("swap"), SLOT)
    assert requests(rig) == {"swap_order": 1}
    with JupiterClient.from_config(rig.config, SecretStr("k")) as keyed:
        outcome = outcome_of(rig.runner(api=keyed).fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert requests(rig) == {"swap_order": 2, "execute_swap": 1}


@pytest.mark.parametrize(
    ("config", "plan", "api"),
    [(V2, None, "swap"), ("ultra-v1", None, "ultra"), (V2, "ultra-v1", "ultra"),
     ("ultra-v1", V2, "swap")],
)  # fmt: skip
def test_the_plan_choice_wins_over_the_config(
    make_rig: RigFactory, config: str, plan: str | None, api: str
) -> None:
    rig = make_rig(swap_api=config)
    settings = {"swap_api": plan} if plan else {}
    outcome = outcome_of(rig.runner().fire(rig.plan("swap", settings=settings), SLOT))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    if api == "swap":
        assert requests(rig) == {"swap_order": 1, "execute_swap": 1}
    else:
        assert requests(rig) == {"ultra_order": 1, "execute_ultra": 1}
    (detail,) = ordered(rig, outcome.run_id)
    assert detail["api"] == (V2 if api == "swap" else "ultra-v1")


def test_an_order_that_cannot_be_built_is_skipped_with_its_code(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url, swap_api=V2)
    rig.emulator.ledger.set_balance(rig.wallet.address, USDC, 0)
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert (outcome.error_code, outcome.error) == ("1", "order not possible: insufficient funds "
                                                        "(errorCode 1)")  # fmt: skip
    run = rig.run(outcome.run_id)
    assert run.request_id is not None
    assert run.signed_tx is None
    assert requests(rig) == {"swap_order": 1}


@pytest.mark.parametrize("fault", [{"kind": "hostile"}, {"kind": "hostile", "receiver": "x"}])
def test_a_hostile_swap_v2_transaction_is_rejected_and_never_signed(
    make_rig: RigFactory, fault: dict[str, Any]
) -> None:
    rig = make_rig(swap_api=V2)
    rig.emulator.faults.extend([{**fault, "operation": "swap_order"}])
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.REJECTED
    assert "txguard refused" in (outcome.error or "")
    assert rig.run(outcome.run_id).signed_tx is None
    assert requests(rig) == {"swap_order": 1}


def test_a_drain_hidden_in_a_swap_v2_transaction_is_refused_by_its_simulation(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(swap_api=V2)
    rig.emulator.faults.add("hidden_drain", operation="swap_order")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.REJECTED
    assert "would lose" in (outcome.error or "")
    assert rig.landed() == []


# --- crashes after signing ---------------------------------------------------------


@pytest.mark.parametrize("point", failpoints.NAMES)
def test_a_crash_at_any_step_ends_in_exactly_one_swap_v2_order(
    make_rig: RigFactory, db_url: str, point: str
) -> None:
    rig = make_rig(db_url=db_url, swap_api=V2)
    plan = rig.plan("swap")
    failpoints.arm(point)
    crash(lambda: rig.runner().fire(plan, SLOT))
    outcomes = recover(rig.runner(rpc=rig.rpc()), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    (landed,) = rig.landed()
    assert rig.run(outcomes[0].run_id).signature == landed.signature
    assert recover(rig.runner(), startup=True) == []
    assert requests(rig).get("ultra_order", 0) == requests(rig).get("execute_ultra", 0) == 0


def test_signed_then_crash_reposts_the_same_bytes_with_the_same_height(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url, swap_api=V2)
    failpoints.arm("after_sign")
    crash(lambda: rig.runner().fire(rig.plan("swap"), SLOT))
    (run_id,) = rig.run_ids()
    before = rig.run(run_id)
    # the config moved back to Ultra since: the order's own API still takes its execute
    ultra = make_rig(db_url=db_url, swap_api="ultra-v1", emulator=rig.emulator)
    outcomes = recover(ultra.runner(rpc=rig.rpc()), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    after = rig.run(run_id)
    assert (after.signature, after.signed_tx) == (before.signature, before.signed_tx)
    assert requests(rig) == {"swap_order": 1, "execute_swap": 1}
    heights = [d.get("last_valid_block_height") for _, s, d in rig.events(run_id)
               if s == "block_height"]  # fmt: skip
    assert heights == [ordered(rig, run_id)[0]["last_valid_block_height"]]


# --- an expired lastValidBlockHeight ----------------------------------------------


def _signed_then_crashed(make_rig: RigFactory, db_url: str, grace: int) -> tuple[Rig, Clock]:
    clock = Clock(SLOT)
    rig = make_rig(db_url=db_url, clock=clock, swap_api=V2)
    plan = rig.plan("swap", schedule={"every": "1h", "grace": grace})
    failpoints.arm("after_sign")
    crash(lambda: rig.runner().fire(plan, SLOT))
    return rig, clock


def test_past_its_height_a_signed_run_is_never_posted_and_ordered_afresh_within_grace(
    make_rig: RigFactory, db_url: str
) -> None:
    rig, clock = _signed_then_crashed(make_rig, db_url, grace=900)
    (run_id,) = rig.run_ids()
    first = rig.run(run_id)
    clock.advance(30)  # by the clock the blockhash is young; by the chain it is gone
    advance_blocks(rig, VALID_BLOCKS)  # with the 50 blocks of those 30 s: well past
    outcomes = recover(rig.runner(rpc=rig.rpc()), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert rig.issued() == 2
    (landed,) = rig.landed()
    assert landed.signature != first.signature
    assert rig.emulator.ledger.execution(first.signature or "") is None  # never posted
    assert requests(rig)["execute_swap"] == 1
    steps = rig.steps(run_id)
    assert steps.index("block_height") < steps.index("reorder") < steps.index("executed")
    (reorder,) = [d for _, s, d in rig.events(run_id) if s == "reorder"]
    assert "is past the order's lastValidBlockHeight" in reorder["expired"]


def test_past_its_height_and_its_grace_a_signed_run_fails_and_nothing_is_sent(
    make_rig: RigFactory, db_url: str
) -> None:
    rig, clock = _signed_then_crashed(make_rig, db_url, grace=60)
    clock.advance(120)
    outcomes = recover(rig.runner(rpc=rig.rpc()), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.FAILED]
    assert (outcomes[0].error or "").startswith("expired before it was posted, nothing was sent:")
    assert rig.issued() == 1
    assert rig.landed() == []
    assert "execute_swap" not in requests(rig)
    assert "expired_unposted" in rig.steps(outcomes[0].run_id)


def test_still_within_its_height_a_signed_run_is_posted(
    make_rig: RigFactory, sqlite_url: str
) -> None:
    rig, _ = _signed_then_crashed(make_rig, sqlite_url, grace=900)
    advance_blocks(rig, VALID_BLOCKS)  # at its lastValidBlockHeight: the last block it may land in
    outcomes = recover(rig.runner(rpc=rig.rpc()), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert rig.issued() == 1


def test_without_an_rpc_the_time_fallback_decides(make_rig: RigFactory, db_url: str) -> None:
    """No node to ask for the height: 4/3 of runner.blockhash_validity after the order."""
    rig, clock = _signed_then_crashed(make_rig, db_url, grace=900)
    clock.advance(90 * 4 / 3 + 1)
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert rig.issued() == 2
    assert requests(rig)["execute_swap"] == 1  # the expired bytes were never posted
    (reorder,) = [d for _, s, d in rig.events(outcomes[0].run_id) if s == "reorder"]
    assert "runner.blockhash_validity" in reorder["expired"]


def test_an_rpc_that_cannot_answer_falls_back_to_time(
    make_rig: RigFactory, sqlite_url: str
) -> None:
    rig, clock = _signed_then_crashed(make_rig, sqlite_url, grace=900)

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    down = SolanaRpc("http://127.0.0.1:9/rpc", transport=httpx.MockTransport(refuse))
    clock.advance(10)  # young by the clock: posted, and it lands
    outcomes = recover(rig.runner(rpc=down), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert rig.issued() == 1
    assert "block_height_unknown" in rig.steps(outcomes[0].run_id)


def test_posted_after_its_height_the_answer_is_invalid_block_height_and_a_fresh_order(
    make_rig: RigFactory, db_url: str
) -> None:
    """Without an RPC the young-looking bytes are posted; the API answers -1004."""
    rig, _ = _signed_then_crashed(make_rig, db_url, grace=900)
    advance_blocks(rig, VALID_BLOCKS + 1)  # one block past its lastValidBlockHeight
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert rig.issued() == 2
    assert len(rig.landed()) == 1
    (reorder,) = [d for _, s, d in rig.events(outcomes[0].run_id) if s == "reorder"]
    assert reorder["error_code"] == "-1004"


# --- the execute bucket, over loopback -------------------------------------------


def _real_time_client(make_client: ClientFactory, url: str, **kw: Any) -> Any:
    """A client on the real clock whose waits are recorded, not slept: nothing moves
    time on, so a bucket that is held back stays held back."""
    return make_client(url, sleep=lambda s: None, clock=time.monotonic, wall=time.time, **kw)


@pytest.mark.parametrize(("limited", "free"), [("execute_swap", "swap_order"),
                                               ("swap_order", "execute_swap")])  # fmt: skip
def test_a_429_holds_back_only_the_bucket_that_answered_it(
    make_client: ClientFactory, limited: str, free: str
) -> None:
    emulator = Emulator(seed=6)
    payer = Wallet.generate()
    calls = Recorder()
    with EmulatorServer().start(emulator) as server:
        client = _real_time_client(make_client, server.url, rate_limit=100, max_attempts=2)

        def call(operation: str) -> None:
            order = client.swap_order(payer.address, SWAP_REQUEST, calls)
            if operation == "execute_swap":
                signed = sign(payer, order.transaction or "")
                assert client.execute_swap(signed, order.request_id,
                                           order.last_valid_block_height, calls).succeeded  # fmt: skip

        emulator.faults.add("rate_limit", operation=limited, retry_after=7)
        call("execute_swap")  # an order and an execute; one of them is answered 429 first
        calls.attempts.clear()
        call("execute_swap")
    waited = {a.operation: a.waited for a in calls.attempts}
    assert waited[free] < 1  # never held back by the other bucket's 429
    assert waited[limited] == pytest.approx(7, abs=0.5)  # its own bucket still waits


def test_the_execute_buckets_own_headers_pace_only_executes(make_client: ClientFactory) -> None:
    emulator = Emulator(seed=6, rate_limit=100, execute_rate_limit=2 / 60)  # 2 a minute
    payer = Wallet.generate()
    with EmulatorServer().start(emulator) as server:
        client = _real_time_client(make_client, server.url, rate_limit=100,
                                   execute_rate_limit=100)  # fmt: skip
        for _ in range(2):
            order = client.swap_order(payer.address, SWAP_REQUEST)
            result = client.execute_swap(sign(payer, order.transaction or ""), order.request_id,
                                         order.last_valid_block_height)  # fmt: skip
            assert result.succeeded
    # the second execute answer said its window is spent: executes wait for its reset...
    assert client.buckets.for_operation("execute_swap").acquire() > 30
    # ...orders, counted in the main window (96 left), do not
    assert client.pacer.acquire() < 1
