"""The emulator's answers validate against Jupiter's own schemas (the OpenAPI
files in tests/fixtures/openapi): each operation jupcron calls, its success and
its documented error answers, in process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from tests.fixtures.emulator import sign
from tests.fixtures.openapi_spec import component, examples, validator

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def call(emu: Emulator, method: str, path: str, body: Any = None, **query: str) -> Any:
    raw = b"" if body is None else json.dumps(body).encode()
    answer = emu.handle(method, path, query, {}, raw)
    return answer.status, json.loads(answer.body) if answer.body else None


def valid(spec: str, path: str, method: str, status: int, data: Any) -> None:
    validator(spec, path, method, str(status)).validate(data)


@pytest.fixture
def emu() -> Emulator:
    return Emulator(seed=11)


@pytest.mark.parametrize(("spec", "prefix"), [("ultra", "/ultra/v1"), ("swap", "/swap/v2")])
def test_swap_order_and_execute(emu: Emulator, spec: str, prefix: str) -> None:
    wallet = Wallet.generate()
    query = {"inputMint": USDC, "outputMint": SOL, "amount": "5000000", "taker": wallet.address}
    status, order = call(emu, "GET", f"{prefix}/order", **query)
    assert status == 200
    valid(spec, "/order", "get", status, order)
    body = {"signedTransaction": sign(wallet, order["transaction"]),
            "requestId": order["requestId"]}  # fmt: skip
    status, result = call(emu, "POST", f"{prefix}/execute", body)
    assert status == 200
    assert result["status"] == "Success"
    valid(spec, "/execute", "post", status, result)
    status, unknown = call(emu, "POST", f"{prefix}/execute",
                           {**body, "requestId": "not-a-request"})  # fmt: skip
    valid(spec, "/execute", "post", status, unknown)


def test_swap_v2_order_error_answer(emu: Emulator) -> None:
    emu.faults.extend([{"kind": "order_error", "operation": "swap_order"}])
    status, data = call(emu, "GET", "/swap/v2/order", inputMint=USDC, outputMint=SOL,
                        amount="5", taker=Wallet.generate().address)  # fmt: skip
    assert status == 200
    assert "error" in data
    valid("swap", "/order", "get", status, data)


def test_recurring_create_execute_and_list(emu: Emulator) -> None:
    wallet = Wallet.generate()
    request = {"user": wallet.address, "inputMint": USDC, "outputMint": SOL,
               "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 2,
                                   "interval": 86400}}}  # fmt: skip
    status, order = call(emu, "POST", "/recurring/v1/createOrder", request)
    assert status == 200
    valid("recurring", "/createOrder", "post", status, order)
    body = {"signedTransaction": sign(wallet, order["transaction"]),
            "requestId": order["requestId"]}  # fmt: skip
    status, result = call(emu, "POST", "/recurring/v1/execute", body)
    valid("recurring", "/execute", "post", status, result)
    status, page = call(emu, "GET", "/recurring/v1/getRecurringOrders", user=wallet.address,
                        orderStatus="active", recurringType="time", page="1", mint="",
                        includeFailedTx="false")  # fmt: skip
    assert status == 200
    assert page["time"]
    # the spec contradicts its own example on two fields of an order (its schema: both
    # strings; its example: ``cycleFrequency: 60``, ``closeTx: null``): the emulator
    # follows the example; every other field is held to the schema
    (example,) = [e for e in examples("recurring") if e.path == "/getRecurringOrders"]
    documented = example.body["time"][0]
    assert isinstance(documented["cycleFrequency"], int)
    assert documented["closeTx"] is None
    envelope = {**page, "time": []}
    valid("recurring", "/getRecurringOrders", "get", status, envelope)
    item = component("recurring", "TimeRecurringResponse")
    for order in [documented, *page["time"]]:
        problems = {e.json_path for e in item.iter_errors(order)}
        assert problems <= {"$.cycleFrequency", "$.closeTx"}, problems


def test_trigger_cancel_execute_and_list(emu: Emulator) -> None:
    wallet = Wallet.generate()
    seeded = emu.handle("POST", "/_emulator/trigger-orders", {}, {},
                        json.dumps({"maker": wallet.address}).encode()).json()  # fmt: skip
    request = {"maker": wallet.address, "order": seeded["order"], "computeUnitPrice": "auto"}
    status, order = call(emu, "POST", "/trigger/v1/cancelOrder", request)
    assert status == 200
    valid("trigger", "/cancelOrder", "post", status, order)
    status, bad = call(emu, "POST", "/trigger/v1/cancelOrder", {**request, "maker": "nope"})
    assert status == 400
    valid("trigger", "/cancelOrder", "post", status, bad)
    body = {"signedTransaction": sign(wallet, order["transaction"]),
            "requestId": order["requestId"]}  # fmt: skip
    status, result = call(emu, "POST", "/trigger/v1/execute", body)
    valid("trigger", "/execute", "post", status, result)
    status, page = call(emu, "GET", "/trigger/v1/getTriggerOrders", user=wallet.address,
                        orderStatus="history", page="1", includeFailedTx="false")  # fmt: skip
    assert status == 200
    valid("trigger", "/getTriggerOrders", "get", status, page)


def test_portfolio_positions(emu: Emulator) -> None:
    wallet = Wallet.generate()
    status, data = call(emu, "GET", f"/portfolio/v1/positions/{wallet.address}")
    assert status == 200
    valid("portfolio", "/positions/{address}", "get", status, data)
