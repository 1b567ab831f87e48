"""The emulator's pure handler: transactions, ledger, faults, determinism, RPC."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from solders.pubkey import Pubkey

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator, build_unsigned
from jupcron.emulator.core import ROUTES
from jupcron.emulator.faults import FaultKind, Faults
from jupcron.emulator.ledger import EXAMPLE_TRIGGER_ORDERS, SOL_MINT
from jupcron.emulator.txbuild import (
    AGGREGATOR_PROGRAM,
    DCA_PROGRAM,
    LIMIT_ORDER_PROGRAM,
    fee_payer_signature_ok,
    from_b64,
)
from tests.fixtures.emulator import RECURRING_REQUEST, SWAP_REQUEST, USDC, sign

PYUSD = "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo"  # a Token-2022 mint

COMPUTE_BUDGET = Pubkey.from_string("ComputeBudget111111111111111111111111111111")


def call(emu: Emulator, method: str, path: str, body: Any = None, **query: str) -> Any:
    raw = b"" if body is None else json.dumps(body).encode()
    answer = emu.handle(method, path, query, {}, raw)
    return answer.status, json.loads(answer.body) if answer.body else None


ASSOCIATED_TOKEN = Pubkey.from_string("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
TOKEN = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")


@pytest.mark.parametrize(
    ("kind", "programs"),
    [("recurring", {DCA_PROGRAM}), ("trigger_cancel", {LIMIT_ORDER_PROGRAM}),
     # USDC -> SOL: the output account is created first and the wSOL closed after
     ("swap", {AGGREGATOR_PROGRAM, ASSOCIATED_TOKEN, TOKEN})],
)  # fmt: skip
def test_build_unsigned_is_a_real_v0_message(kind: str, programs: set[Pubkey]) -> None:
    owner = Wallet.generate().pubkey
    tx = build_unsigned(kind, owner)
    message = tx.message
    assert message.header.num_required_signatures == 1
    assert message.account_keys[0] == owner
    called = {message.account_keys[ix.program_id_index] for ix in message.instructions}
    assert called == programs | {COMPUTE_BUDGET}
    assert not fee_payer_signature_ok(tx, owner)
    assert bool(message.address_table_lookups) is (kind == "swap")


def test_issued_transactions_have_fresh_blockhashes_and_the_caller_as_payer() -> None:
    emu = Emulator(seed=3)
    payer = Wallet.generate()
    hashes = set()
    for _ in range(3):
        status, data = call(emu, "GET", "/ultra/v1/order", taker=payer.address,
                            **{k: str(v) for k, v in SWAP_REQUEST.items()})  # fmt: skip
        assert status == 200
        tx = from_b64(data["transaction"])
        assert tx.message.account_keys[0] == payer.pubkey
        hashes.add(str(tx.message.recent_blockhash))
    assert len(hashes) == 3


def test_same_seed_same_ids_and_fault_draws() -> None:
    def run(seed: int) -> tuple[list[str], list[tuple[str, str]]]:
        emu = Emulator(seed=seed, default_balances={})
        emu.faults.add("server_error", count=0, probability=0.5)
        ids = []
        for _ in range(12):
            status, data = call(emu, "POST", "/recurring/v1/createOrder",
                                {**RECURRING_REQUEST, "user": str(Pubkey.default())})  # fmt: skip
            ids.append(data.get("requestId", status))
        return [str(i) for i in ids], list(emu.faults.history)

    assert run(5) == run(5)
    assert run(5) != run(6)
    assert 0 < len(run(5)[1]) < 12


def test_fault_targets_only_its_operation_and_skip() -> None:
    faults = Faults()
    faults.add("drop", operation="execute_*", skip=1)
    assert faults.take("ultra_order") is None
    assert faults.take("execute_ultra") is None  # skipped once
    assert faults.take("execute_trigger") is not None
    assert faults.take("execute_trigger") is None  # count 1 spent


def test_execute_only_faults_never_fire_on_orders() -> None:
    faults = Faults()
    faults.add("failed")
    assert faults.take("ultra_order") is None
    assert faults.take("execute_recurring") is not None


@pytest.mark.parametrize(
    "fault",
    [{"kind": "meteor"}, {"kind": "drop", "count": -1}, {"kind": "drop", "probability": 2},
     {"kind": "drop", "operation": 3}, "drop"],
)  # fmt: skip
def test_bad_faults_are_refused_with_a_message(fault: Any) -> None:
    emu = Emulator()
    status, data = call(emu, "POST", "/_emulator/faults", fault)
    assert status == 400
    assert data["error"]
    assert emu.faults.pending() == []


def test_key_and_rate_limit_headers() -> None:
    emu = Emulator(api_key="k", rate_limit=1, rate_window=2, clock=lambda: 1000.0)
    path = f"/portfolio/v1/positions/{Pubkey.default()}"
    assert emu.handle("GET", path, {}, {}, b"").status == 401
    first = emu.handle("GET", path, {}, {"X-Api-Key": "k"}, b"")
    assert first.status == 200
    assert first.headers["x-ratelimit-remaining"] == "1"
    assert first.headers["x-ratelimit-reset"] == "1002"
    emu.handle("GET", path, {}, {"x-api-key": "k"}, b"")
    third = emu.handle("GET", path, {}, {"x-api-key": "k"}, b"")
    assert third.status == 429
    assert third.headers["x-ratelimit-remaining"] == "-1"  # signed: over the limit (the docs)
    assert third.headers["x-ratelimit-current"] == "3"


def test_unknown_route_and_rpc_methods() -> None:
    emu = Emulator()
    assert emu.handle("GET", "/nope", {}, {}, b"").status == 404
    _, data = call(emu, "POST", "/rpc", {"jsonrpc": "2.0", "id": 4, "method": "sendTransaction"})
    assert data["error"]["code"] == -32601
    _status, data = call(emu, "POST", "/rpc", {"jsonrpc": "2.0", "id": 5, "method": "getTransaction",
                                              "params": ["x", {"encoding": "json"}]})  # fmt: skip
    assert data["error"]["code"] == -32015


def test_rpc_without_history_forgets_old_signatures() -> None:
    now = [1000.0]
    emu = Emulator(clock=lambda: now[0])
    payer = Wallet.generate()
    _, quote = call(emu, "GET", "/ultra/v1/order", taker=payer.address,
                    **{k: str(v) for k, v in SWAP_REQUEST.items()})  # fmt: skip
    _, result = call(emu, "POST", "/ultra/v1/execute",
                     {"signedTransaction": sign(payer, quote["transaction"]),
                      "requestId": quote["requestId"]})  # fmt: skip
    now[0] += 1000
    query = {"jsonrpc": "2.0", "id": 1, "method": "getSignatureStatuses",
             "params": [[result["signature"]]]}  # fmt: skip
    assert call(emu, "POST", "/rpc", query)[1]["result"]["value"] == [None]
    query["params"].append({"searchTransactionHistory": True})
    assert call(emu, "POST", "/rpc", query)[1]["result"]["value"][0]["slot"] == int(result["slot"])


def test_reset_clears_the_ledger_but_the_example_orders() -> None:
    emu = Emulator()
    examples = {o.order for o in EXAMPLE_TRIGGER_ORDERS}
    payer = Wallet.generate()
    seeded = call(emu, "POST", "/_emulator/trigger-orders", {"maker": payer.address})[1]["order"]
    assert set(emu.ledger.trigger_orders) == {*examples, seeded}
    call(emu, "POST", "/_emulator/reset", {})
    assert set(emu.ledger.trigger_orders) == examples
    assert all(o.maker is None and o.status == "Open" for o in emu.ledger.trigger_orders.values())


def test_the_example_order_belongs_to_the_first_wallet_that_cancels_it() -> None:
    emu = Emulator()
    (example,) = EXAMPLE_TRIGGER_ORDERS
    first, second = Wallet.generate(), Wallet.generate()
    status, body = call(emu, "POST", "/trigger/v1/cancelOrder",
                        {"maker": first.address, "order": example.order})  # fmt: skip
    assert status == 200, body
    assert emu.ledger.trigger_orders[example.order].maker == first.address
    status, body = call(emu, "POST", "/trigger/v1/cancelOrder",
                        {"maker": second.address, "order": example.order})  # fmt: skip
    assert (status, body["error"]) == (400, "no matching orders found")


@pytest.mark.parametrize(
    ("price", "status"),
    [("auto", 200), ("700000", 200), (None, 200), (700000, 400), ("fast", 400), ("-5", 400)],
)
def test_cancel_order_takes_compute_unit_price_as_a_string(price: Any, status: int) -> None:
    # the API types it as a string ("auto" or micro-lamports): the client sends that form
    emu = Emulator()
    maker = Wallet.generate().address
    order = call(emu, "POST", "/_emulator/trigger-orders", {"maker": maker})[1]["order"]
    body = {"maker": maker, "order": order}
    if price is not None:
        body["computeUnitPrice"] = price
    got, answer = call(emu, "POST", "/trigger/v1/cancelOrder", body)
    assert got == status, answer


def _recurring_raw(time_json: str, user: str, input_mint: str = USDC) -> bytes:
    return (
        f'{{"user":"{user}","inputMint":"{input_mint}","outputMint":"{SOL_MINT}",'
        f'"params":{{"time":{time_json}}}}}'
    ).encode()


def test_recurring_price_bounds_are_json_numbers_kept_digit_for_digit() -> None:
    emu = Emulator()
    user = Wallet.generate().address
    time = '{"inAmount":200000000,"numberOfOrders":2,"interval":86400,'
    exact = time + '"minPrice":0.000123456789012345678901,"maxPrice":250}'
    answer = emu.handle("POST", "/recurring/v1/createOrder", {}, {}, _recurring_raw(exact, user))
    assert answer.status == 200, answer.body
    issued = emu.ledger.get_issued(answer.json()["requestId"])
    assert issued is not None
    assert issued.extra["minPrice"] == "0.000123456789012345678901"
    assert issued.extra["maxPrice"] == "250"
    for bad in ('"minPrice":"1.5"}', '"maxPrice":true}', '"minPrice":-1}'):
        answer = emu.handle("POST", "/recurring/v1/createOrder", {}, {},
                            _recurring_raw(time + bad, user))  # fmt: skip
        assert answer.status == 400, bad
        assert "must be a positive number or null" in answer.json()["error"]
    null = time + '"minPrice":null}'
    assert emu.handle("POST", "/recurring/v1/createOrder", {}, {},
                      _recurring_raw(null, user)).status == 200  # fmt: skip


def test_recurring_refuses_a_token_2022_mint() -> None:
    emu = Emulator()
    time = '{"inAmount":200000000,"numberOfOrders":2,"interval":86400}'
    raw = _recurring_raw(time, Wallet.generate().address, input_mint=PYUSD)
    answer = emu.handle("POST", "/recurring/v1/createOrder", {}, {}, raw)
    assert answer.status == 400
    assert answer.json()["error"] == f"Token-2022 mints are not supported: {PYUSD}"


@pytest.mark.parametrize(
    ("address", "owner"),
    [(USDC, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
     (PYUSD, "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"),
     (str(Pubkey.new_unique()), None)],
)  # fmt: skip
def test_rpc_get_account_info_names_a_mints_program(address: str, owner: str | None) -> None:
    query = {"jsonrpc": "2.0", "id": 7, "method": "getAccountInfo",
             "params": [address, {"encoding": "base64"}]}  # fmt: skip
    value = call(Emulator(), "POST", "/rpc", query)[1]["result"]["value"]
    assert (value["owner"] if value else None) == owner


EMULATOR_DOC = (Path(__file__).resolve().parents[2] / "docs" / "emulator.md").read_text()
# a body for each documented control endpoint that takes one
CONTROL_BODIES: dict[str, Any] = {
    "/_emulator/faults": {"kind": "slow", "operation": "ultra_order"},
    "/_emulator/balances": {"owner": str(Pubkey.new_unique()), "mint": USDC, "amount": 5},
    "/_emulator/trigger-orders": {"maker": str(Pubkey.new_unique())},
    "/_emulator/trigger-fill": {"order": EXAMPLE_TRIGGER_ORDERS[0].order, "makingAmount": 1},
    "/_emulator/keeper": {"advance": 0},
    "/_emulator/blocks": {"advance": 0},
    "/_emulator/oracle": {"mint": "SOL", "price": 151},
}


def test_every_documented_control_endpoint_answers() -> None:
    rows = re.findall(r"^\| `(GET|POST) (/_emulator/[a-z/-]+)` \|", EMULATOR_DOC, re.MULTILINE)
    assert len(rows) == 12, rows
    emu = Emulator()
    for method, path in rows:
        status, body = call(emu, method, path, CONTROL_BODIES.get(path, {}))
        assert status == 200, (method, path, body)
    assert call(emu, "POST", "/_emulator/undocumented", {})[0] == 404


def test_the_documented_fault_kinds_and_rpc_methods_are_the_real_ones() -> None:
    kinds = set(re.findall(r"^\| `([a-z_]+)` \| ", EMULATOR_DOC, re.MULTILINE))
    assert kinds == {str(k) for k in FaultKind}
    listed = EMULATOR_DOC.split("operations:", 1)[1].split(")", 1)[0]
    assert set(re.findall(r"`([a-z_]+)`", listed)) == {*ROUTES.values(), "positions"}
    section = EMULATOR_DOC.split("`POST /rpc` answers", 1)[1].split("##", 1)[0]
    methods = re.findall(r"`((?:get|simulate)[A-Za-z]+)`", section)
    assert len(methods) == 9, methods
    emu = Emulator()
    user = Wallet.generate().address
    issued = call(emu, "POST", "/recurring/v1/createOrder", {**RECURRING_REQUEST, "user": user})
    for method in methods:
        params: list[Any] = [str(Pubkey.new_unique()), {"maxSupportedTransactionVersion": 0}]
        if method in ("getSignatureStatuses", "getMultipleAccounts"):
            params = [[str(Pubkey.new_unique())]]
        if method == "simulateTransaction":
            params = [issued[1]["transaction"], {}]
        answer = call(emu, "POST", "/rpc", {"jsonrpc": "2.0", "id": 1, "method": method,
                                            "params": params})[1]  # fmt: skip
        assert "result" in answer, (method, answer)
