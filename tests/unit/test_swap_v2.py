"""Swap V2 in pieces, without sockets: the order's typed answer, the product
choice (config, plan), the execute bucket of the pacer, and the emulator's
/swap/v2 (its block height, lastValidBlockHeight, the -1004 of an expired one,
its own rate bucket)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from jupcron.api.client import KEYED_EXECUTE_RATE, KEYLESS_EXECUTE_RATE, JupiterClient
from jupcron.api.models import SwapOrder, UltraOrder
from jupcron.chain.wallet import Wallet
from jupcron.config import Config
from jupcron.emulator import Emulator
from jupcron.emulator.common import VALID_BLOCKS
from jupcron.plans.load import load_plans
from jupcron.products.base import SWAP_V2, ULTRA_V1, Ordered, SwapTerms
from tests.fixtures.emulator import SWAP_REQUEST, ClientFactory, FakeTime, Recorder, sign
from tests.fixtures.plans import recurring_plan, swap_plan, write_plans

QUERY = {k: str(v) for k, v in SWAP_REQUEST.items()}


def call(emu: Emulator, method: str, path: str, body: Any = None, **query: str) -> Any:
    raw = b"" if body is None else json.dumps(body).encode()
    answer = emu.handle(method, path, query, {}, raw)
    return answer.status, json.loads(answer.body) if answer.body else None


def order_v2(emu: Emulator, payer: Wallet) -> dict[str, Any]:
    status, data = call(emu, "GET", "/swap/v2/order", taker=payer.address, **QUERY)
    assert status == 200, data
    return data  # type: ignore[no-any-return]


def execute_v2(emu: Emulator, payer: Wallet, order: dict[str, Any], **extra: Any) -> Any:
    body = {"signedTransaction": sign(payer, order["transaction"]),
            "requestId": order["requestId"], **extra}  # fmt: skip
    return call(emu, "POST", "/swap/v2/execute", body)


# --- the typed order ---------------------------------------------------------------

BASE = {"requestId": "r1", "inAmount": "5", "outAmount": "7", "router": "metis"}


@pytest.mark.parametrize(("given", "height"), [("312345678", 312345678), (312345678, 312345678),
                                               (" 42 ", 42), (None, None)])  # fmt: skip
def test_the_last_valid_block_height_is_read_from_a_string_or_a_number(
    given: object, height: int | None
) -> None:
    order = SwapOrder.model_validate({**BASE, "transaction": "AQ==", "lastValidBlockHeight": given})
    assert order.last_valid_block_height == height


@pytest.mark.parametrize("bad", ["", "12.5", "-3", -3, 1.5, True, "soon"])
def test_a_block_height_that_is_not_a_whole_number_is_refused(bad: object) -> None:
    with pytest.raises(ValidationError):
        SwapOrder.model_validate({**BASE, "transaction": "AQ==", "lastValidBlockHeight": bad})


def test_an_empty_transaction_with_an_error_code_is_skipped_with_the_routers_meaning() -> None:
    metis = SwapOrder.model_validate({**BASE, "transaction": "", "errorCode": 2})
    rfq = SwapOrder.model_validate(
        {**BASE, "router": "jupiterz", "transaction": "", "errorCode": 2}
    )
    assert metis.skipped
    assert rfq.skipped
    assert metis.skip_reason == "needs SOL for gas"
    assert rfq.skip_reason == "missing associated token account"
    built = SwapOrder.model_validate({**BASE, "transaction": "AQ==", "lastValidBlockHeight": "9"})
    assert not built.skipped
    assert built.skip_reason is None
    # Ultra's spec answers the same way ("" with its errorCode; openapi-spec/ultra/ultra.yaml)
    assert UltraOrder.model_validate({**BASE, "transaction": "", "errorCode": 2}).skipped


def test_swap_terms_come_from_the_latest_order_and_default_to_ultra() -> None:
    v2 = Ordered("r", "tx", swap=SwapTerms(SWAP_V2, 300)).detail()
    assert v2 == {"request_id": "r", "gasless": False, "api": SWAP_V2,
                  "last_valid_block_height": 300}  # fmt: skip
    steps = [("ordered", {"request_id": "a", "api": SWAP_V2, "last_valid_block_height": 1}),
             ("reorder", {}), ("ordered", v2)]  # fmt: skip
    assert SwapTerms.of(steps) == SwapTerms(SWAP_V2, 300)
    # a run ordered before Swap V2 support recorded no api: it was Ultra's
    assert SwapTerms.of([("ordered", {"request_id": "a", "gasless": False})]) == SwapTerms()
    assert SwapTerms.of([]).api == ULTRA_V1


# --- choosing the API -----------------------------------------------------------------


def test_a_config_that_chooses_nothing_sends_swaps_to_swap_v2() -> None:
    config = Config()
    assert config.api.swap_api == "swap-v2"
    assert config.api.paths.swap == "/swap/v2"
    assert config.api.paths.ultra == "/ultra/v1"
    assert Config.model_validate({"api": {"swap_api": "ultra-v1"}}).api.swap_api == "ultra-v1"


@pytest.mark.parametrize("bad", ["v2", "ultra", "", 2])
def test_an_unknown_swap_api_is_a_config_error(bad: object) -> None:
    with pytest.raises(ValidationError, match="swap-v2"):
        Config.model_validate({"api": {"swap_api": bad}})


# --- the execute bucket of the client ------------------------------------------------


def test_swap_v2_execute_is_paced_in_its_own_bucket(fake_time: FakeTime) -> None:
    client = JupiterClient("http://x", api_key=None, rate_limit=0.5,
                           sleep=fake_time.sleep, clock=fake_time.clock, wall=fake_time.wall)  # fmt: skip
    try:
        main = client.buckets.for_operation("swap_order")
        execute = client.buckets.for_operation("execute_swap")
        assert main is client.pacer
        assert main is client.buckets.for_operation("execute_ultra")
        assert execute is not main
        assert execute.rate == KEYLESS_EXECUTE_RATE
        main.block_for(60)  # a 429 on the main bucket...
        assert execute.acquire() == 0  # ...never holds back an execute
        assert main.acquire() == pytest.approx(60)
    finally:
        client.close()


def test_the_execute_bucket_follows_the_key_and_the_config() -> None:
    from pydantic import SecretStr

    with JupiterClient("http://x", api_key=SecretStr("k")) as keyed:
        assert keyed.buckets.for_operation("execute_swap").rate == KEYED_EXECUTE_RATE
    config = Config.model_validate({"api": {"execute_rate_limit": 100}})
    with JupiterClient.from_config(config, None) as configured:
        assert configured.buckets.for_operation("execute_swap").rate == 100


# --- the emulator's Swap V2 -----------------------------------------------------------


def test_the_block_height_advances_with_the_clock_and_the_control_endpoint() -> None:
    t = FakeTime()
    emu = Emulator(seed=1, clock=t.clock, blockhash_ttl=90)
    start = emu.state.block_height()
    t.sleep(60)  # 150 blocks in 90 s: 100 blocks in 60 s
    assert emu.state.block_height() == start + 100
    status, data = call(emu, "POST", "/rpc", {"jsonrpc": "2.0", "id": 1,
                                               "method": "getBlockHeight"})  # fmt: skip
    assert status == 200
    assert data["result"] == start + 100
    status, data = call(emu, "POST", "/_emulator/blocks", {"advance": 7})
    assert (status, data) == (200, {"blockHeight": start + 107})
    assert call(emu, "GET", "/_emulator/ledger")[1]["blockHeight"] == start + 107


@pytest.mark.parametrize("bad", [None, {"advance": -1}, {"advance": 1.5}, {"advance": True}, []])
def test_moving_the_blocks_needs_a_whole_number(bad: object) -> None:
    emu = Emulator(seed=1)
    before = emu.state.block_height()
    status, data = call(emu, "POST", "/_emulator/blocks", bad)
    assert status == 400
    assert "advance" in data["error"]
    assert emu.state.block_height() == before  # nothing changed


def test_a_swap_v2_order_carries_its_last_valid_block_height_as_a_string() -> None:
    t = FakeTime()
    emu = Emulator(seed=2, clock=t.clock)
    payer = Wallet.generate()
    order = order_v2(emu, payer)
    assert order["lastValidBlockHeight"] == str(emu.state.block_height() + VALID_BLOCKS)
    status, result = execute_v2(
        emu, payer, order, lastValidBlockHeight=order["lastValidBlockHeight"]
    )
    assert status == 200
    assert result["status"] == "Success"
    assert result["code"] == 0
    assert emu.ledger.requests == {"swap_order": 1, "execute_swap": 1}
    # Ultra's order has no height
    _, ultra = call(emu, "GET", "/ultra/v1/order", taker=payer.address, **QUERY)
    assert "lastValidBlockHeight" not in ultra


def test_execute_past_the_last_valid_block_height_is_invalid_block_height_and_kept() -> None:
    t = FakeTime()
    emu = Emulator(seed=2, clock=t.clock, blockhash_ttl=90)
    payer = Wallet.generate()
    order = order_v2(emu, payer)
    t.sleep(59)  # still inside 150 blocks (90 s) and the requestId's 120 s
    call(emu, "POST", "/_emulator/blocks", {"advance": VALID_BLOCKS})
    status, result = execute_v2(emu, payer, order)
    assert (status, result["status"], result["code"]) == (200, "Failed", -1004)
    assert emu.ledger.landed() == []
    # decided once: the same bytes get the same answer
    assert execute_v2(emu, payer, order)[1] == result


def test_a_last_valid_block_height_that_is_not_the_orders_is_refused_and_nothing_decided() -> None:
    emu = Emulator(seed=2)
    payer = Wallet.generate()
    order = order_v2(emu, payer)
    wrong = str(int(order["lastValidBlockHeight"]) + 1)
    status, result = execute_v2(emu, payer, order, lastValidBlockHeight=wrong)
    assert (status, result["code"]) == (200, -1004)
    assert emu.ledger.executions == {}
    ok = execute_v2(emu, payer, order, lastValidBlockHeight=order["lastValidBlockHeight"])
    assert ok[1]["status"] == "Success"


def test_an_order_is_only_executable_at_the_api_that_issued_it() -> None:
    emu = Emulator(seed=2)
    payer = Wallet.generate()
    v2 = order_v2(emu, payer)
    body = {"signedTransaction": sign(payer, v2["transaction"]), "requestId": v2["requestId"]}
    assert call(emu, "POST", "/ultra/v1/execute", body) == (400, {"code": -1, "error": pytest.approx(
        "Order not found, it might have expired")})  # fmt: skip
    _, ultra = call(emu, "GET", "/ultra/v1/order", taker=payer.address, **QUERY)
    body = {"signedTransaction": sign(payer, ultra["transaction"]), "requestId": ultra["requestId"]}
    assert call(emu, "POST", "/swap/v2/execute", body)[1]["code"] == -1
    assert emu.ledger.landed() == []


def test_a_v2_order_that_cannot_be_built_has_an_empty_transaction_and_its_code() -> None:
    emu = Emulator(seed=2)
    payer = Wallet.generate()
    emu.ledger.set_balance(payer.address, SWAP_REQUEST["inputMint"], 0)
    data = order_v2(emu, payer)
    assert (data["transaction"], data["errorCode"]) == ("", 1)
    _, ultra = call(emu, "GET", "/ultra/v1/order", taker=payer.address, **QUERY)
    assert (ultra["transaction"], ultra["errorCode"]) == ("", 1)  # Ultra's spec: "" too


def test_swap_v2_execute_has_its_own_rate_bucket_and_headers() -> None:
    t = FakeTime()
    emu = Emulator(seed=2, clock=t.clock, rate_limit=2, rate_window=1.0, execute_rate_limit=3)
    payer = Wallet.generate()
    orders = [order_v2(emu, payer), order_v2(emu, payer)]
    # the main bucket is full: a third order call is refused...
    refused = emu.handle("GET", "/swap/v2/order", {"taker": payer.address, **QUERY}, {}, b"")
    assert refused.status == 429
    # ...and executes still go through, counted in their own window
    answers = [emu.handle("POST", "/swap/v2/execute", {}, {}, json.dumps(
        {"signedTransaction": sign(payer, o["transaction"]), "requestId": o["requestId"]}
    ).encode()) for o in orders]  # fmt: skip
    assert [a.status for a in answers] == [200, 200]
    assert [a.headers["x-ratelimit-current"] for a in answers] == ["1", "2"]
    assert answers[1].headers["x-ratelimit-remaining"] == "1"
    assert emu.handle("POST", "/swap/v2/execute", {}, {}, b"{}").status == 400  # the third
    full = emu.handle("POST", "/swap/v2/execute", {}, {}, b"{}")
    assert full.status == 429
    assert (
        full.headers["x-ratelimit-remaining"] == "-1"
    )  # signed: one over the limit (portal/rate-limits.mdx)
    t.sleep(1.0)  # both windows have slid past
    assert (
        emu.handle("GET", "/swap/v2/order", {"taker": payer.address, **QUERY}, {}, b"").status
        == 200
    )


def test_the_emulator_execute_bucket_defaults_to_the_docs_figures() -> None:
    assert Emulator(rate_limit=1).execute_limiter.capacity == 20 * 60  # type: ignore[union-attr]
    keyed = Emulator(rate_limit=1, api_key="k")
    assert keyed.execute_limiter.capacity == 50 * 60  # type: ignore[union-attr]
    assert Emulator().execute_limiter is None


def test_swap_v2_needs_the_api_key_like_every_other_path() -> None:
    emu = Emulator(api_key="secret")
    payer = Wallet.generate()
    for method, path in (("GET", "/swap/v2/order"), ("POST", "/swap/v2/execute")):
        answer = emu.handle(
            method, path, {"taker": payer.address, **QUERY}, {"x-api-key": "no"}, b"{}"
        )
        assert answer.status == 401


def test_client_against_the_in_process_emulator_passes_the_height_back(
    make_client: ClientFactory,
) -> None:
    emu = Emulator(seed=5)
    payer = Wallet.generate()
    client = make_client(emu)
    recorder = Recorder()
    order = client.swap_order(payer.address, SWAP_REQUEST, recorder)
    assert order.last_valid_block_height == emu.state.block_height() + VALID_BLOCKS
    assert order.transaction
    wrong = client.execute_swap(sign(payer, order.transaction), order.request_id,
                                order.last_valid_block_height + 1)  # fmt: skip
    assert (wrong.status, wrong.code, wrong.operation) == ("Failed", -1004, "execute_swap")
    assert wrong.retry_with_fresh_order  # invalid block height: a fresh order may be tried
    result = client.execute_swap(sign(payer, order.transaction), order.request_id,
                                 order.last_valid_block_height, recorder)  # fmt: skip
    assert result.succeeded
    assert result.input_amount == str(SWAP_REQUEST["amount"])
    assert [a.operation for a in recorder.attempts] == ["swap_order", "execute_swap"]


# --- a plan's swap_api ----------------------------------------------------------------


def test_a_plan_pinned_to_ultra_v1_loads_with_a_warning_suggesting_swap_v2(tmp_path: Path) -> None:
    path = write_plans(tmp_path / "p.yaml", swap_plan("old", swap_api="ultra-v1"))
    result = load_plans([path])
    assert result.problems == []
    (loaded,) = result.plans
    assert loaded.spec.settings_dict()["swap_api"] == "ultra-v1"
    (warning,) = result.warnings
    assert warning.message.startswith("warning: swap_api: ultra-v1 is no longer actively")
    assert "Swap V2" in warning.message
    assert '"swap_api"' in path.read_text().splitlines()[warning.line - 1]  # points at the key


def test_a_plan_on_swap_v2_or_unpinned_has_no_warning_and_an_unchanged_hash(
    tmp_path: Path,
) -> None:
    plain = load_plans([write_plans(tmp_path / "a.yaml", swap_plan("a"))])
    pinned = load_plans([write_plans(tmp_path / "b.yaml", swap_plan("a", swap_api="swap-v2"))])
    assert plain.warnings == pinned.warnings == []
    spec = plain.plans[0].spec
    assert "swap_api" not in spec.settings_dict()  # plans stored before keep their hash
    assert spec.content_hash() != pinned.plans[0].spec.content_hash()


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (recurring_plan("r", swap_api="swap-v2"), "swap_api applies to swap plans only"),
        (swap_plan("s", swap_api="v1"), "swap_api: Input should be 'swap-v2' or 'ultra-v1'"),
    ],
)
def test_a_wrong_swap_api_is_a_plan_problem(
    tmp_path: Path, plan: dict[str, Any], message: str
) -> None:
    result = load_plans([write_plans(tmp_path / "p.yaml", plan)])
    assert result.plans == []
    assert [p.message for p in result.problems] == [message]
