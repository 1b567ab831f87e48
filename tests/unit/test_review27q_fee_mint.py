"""An order's ``feeMint`` is the mint its execute answer shows the fee taken in.

swap.yaml defines the execute amounts by it: ``totalInputAmount`` "including the fee
if feeMint is the input mint", ``inputAmountResult`` "after any fee collected in the
input mint", ``outputAmountResult`` "before any fee collected in the output mint",
``totalOutputAmount`` "after any fee collected in the output mint"; the docs' Swap V2
example (swap/order-and-execute.mdx, pages.json) shows a fee in the output mint as
``outputAmountResult`` above ``totalOutputAmount``. The emulator named the OUTPUT
mint as ``feeMint`` while its execute took the fee from the INPUT."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from tests.fixtures.emulator import sign

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
PREFIX = {"ultra": "/ultra/v1", "swap": "/swap/v2"}


def call(emu: Emulator, method: str, path: str, body: Any = None, **query: str) -> Any:
    raw = b"" if body is None else json.dumps(body).encode()
    answer = emu.handle(method, path, query, {}, raw)
    assert answer.status == 200, answer.body
    return answer.json()


@pytest.mark.parametrize("spec", ["ultra", "swap"])
def test_fee_mint_is_where_execute_takes_the_fee(spec: str) -> None:
    emu = Emulator(seed=7)
    wallet = Wallet.generate()
    emu.ledger.set_balance(wallet.address, USDC, 50_000_000)
    emu.ledger.set_balance(wallet.address, SOL, 1_000_000_000)
    order = call(emu, "GET", f"{PREFIX[spec]}/order", inputMint=USDC, outputMint=SOL,
                 amount="5000000", taker=wallet.address)  # fmt: skip
    body = {
        "signedTransaction": sign(wallet, order["transaction"]),
        "requestId": order["requestId"],
    }
    result = call(emu, "POST", f"{PREFIX[spec]}/execute", body)
    assert result["status"] == "Success"
    in_fee = int(result["totalInputAmount"]) - int(result["inputAmountResult"])
    out_fee = int(result["outputAmountResult"]) - int(result["totalOutputAmount"])
    charged = {m for m, fee in ((USDC, in_fee), (SOL, out_fee)) if fee > 0}
    assert charged == {order["feeMint"]}, (order["feeMint"], in_fee, out_fee)
    # the platform fee the order announced is the one execute took
    fee = in_fee if order["feeMint"] == USDC else out_fee
    assert int(order["platformFee"]["amount"]) == fee
    assert order["platformFee"].get("feeMint", order["feeMint"]) == order["feeMint"]
