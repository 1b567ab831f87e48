"""txguard on Swap V2's transactions: what the emulator's /swap/v2/order issues
(real Aggregator v6 route instructions) passes when held to the plan and
executes once signed; its hostile answers (a drain to a stranger, the output
paid to a stranger) are refused and nothing is signed. In process: `Emulator.handle`, no sockets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupcron.chain.wallet import Wallet
from jupcron.emulator.core import Emulator
from jupcron.errors import GuardRejectedError
from jupcron.txguard import GuardPolicy, check, check_and_sign
from jupcron.txguard.expect import Expectation

POLICY = GuardPolicy()
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
SOL = "So11111111111111111111111111111111111111112"


def _call(emulator: Emulator, method: str, path: str, body: Any = None, **query: str) -> Any:
    raw = json.dumps(body).encode() if body is not None else b""
    answer = emulator.handle(method, path, query, {"content-type": "application/json"}, raw)
    assert 200 <= answer.status < 300, (answer.status, answer.body)
    return json.loads(answer.body)


def _order(emulator: Emulator, owner: str, in_mint: str, out_mint: str, amount: int) -> Any:
    query = {"inputMint": in_mint, "outputMint": out_mint, "amount": str(amount), "taker": owner}
    return _call(emulator, "GET", "/swap/v2/order", **query)


@pytest.mark.parametrize(
    ("in_mint", "out_mint", "amount"),
    [(USDC, SOL, 5_000_000), (SOL, USDC, 200_000_000), (USDC, USDT, 1_000_000)],
)
def test_swap_v2_orders_pass_the_guard_held_to_the_plan_and_execute(
    in_mint: str, out_mint: str, amount: int
) -> None:
    emulator = Emulator(seed=9)
    wallet = Wallet.generate()
    order = _order(emulator, wallet.address, in_mint, out_mint, amount)
    expect = Expectation("swap", input_mint=in_mint, output_mint=out_mint, amount=amount)
    verdict = check(order["transaction"], wallet.pubkey, POLICY, expect=expect)
    assert verdict.reasons == ()
    signed = check_and_sign(wallet, order["transaction"], POLICY, expect=expect)
    body = {"signedTransaction": signed.b64, "requestId": order["requestId"],
            "lastValidBlockHeight": order["lastValidBlockHeight"]}  # fmt: skip
    result = _call(emulator, "POST", "/swap/v2/execute", body)
    assert (result["status"], result["signature"]) == ("Success", signed.signature)


@pytest.mark.parametrize(
    ("fault", "expect_amount", "why"),
    [
        ({"kind": "hostile", "operation": "swap_order"}, 5_000_000, "System"),
        ({"kind": "hostile", "operation": "swap_order", "receiver": "stranger"}, 5_000_000,
         "not ours"),
    ],
)  # fmt: skip
def test_hostile_swap_v2_answers_are_refused_and_nothing_is_signed(
    fault: dict[str, Any], expect_amount: int, why: str
) -> None:
    emulator = Emulator(seed=9, faults=[fault])
    wallet = Wallet.generate()
    order = _order(emulator, wallet.address, USDC, SOL, 5_000_000)
    expect = Expectation("swap", input_mint=USDC, output_mint=SOL, amount=expect_amount)
    with pytest.raises(GuardRejectedError) as refused:
        check_and_sign(wallet, order["transaction"], POLICY, expect=expect)
    assert any(why in reason for reason in refused.value.reasons), refused.value.reasons
    assert emulator.ledger.executions == {}
