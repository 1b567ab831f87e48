"""Ultra v1 and Swap V2 ``GET /order``: a quote and, for a taker who can pay,
an unsigned swap transaction recorded in the ledger (`orders.issue`).

Swap V2's answer is Ultra's plus ``lastValidBlockHeight`` (a string: the
emulated block height now plus 150 blocks, `State.block_height`); the order
remembers its API and height for execute. Both APIs answer ``transaction: ""``
(not null: null means no taker) with an ``errorCode`` when the route cannot be
built for this taker (openapi-spec/ultra/ultra.yaml and swap/v2/swap.yaml)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from solders.pubkey import Pubkey

from jupcron.emulator.common import (
    VALID_BLOCKS,
    EmuResponse,
    State,
    json_response,
    parse_pubkey,
    quote,
    usd_value,
)
from jupcron.emulator.faults import Fault, FaultKind
from jupcron.emulator.ledger import SOL_MINT
from jupcron.emulator.orders import GAS_RESERVE_LAMPORTS, issue


def ultra_order(state: State, query: Mapping[str, str], hostile: Fault | None) -> EmuResponse:
    return _swap_order(state, query, hostile, v2=False)


def swap_order(state: State, query: Mapping[str, str], hostile: Fault | None) -> EmuResponse:
    return _swap_order(state, query, hostile, v2=True)


def _swap_order(
    state: State, query: Mapping[str, str], hostile: Fault | None, *, v2: bool
) -> EmuResponse:
    in_mint, out_mint = query.get("inputMint", ""), query.get("outputMint", "")
    amount_text = query.get("amount", "")
    if not in_mint or not out_mint or not amount_text:
        return json_response(400, {"error": "inputMint, outputMint and amount are required"})
    if parse_pubkey(in_mint) is None or parse_pubkey(out_mint) is None or in_mint == out_mint:
        return json_response(400, {"error": "Failed to get quotes"})
    if not amount_text.isdigit() or int(amount_text) == 0:
        return json_response(400, {"error": "Invalid amount"})
    amount = int(amount_text)
    prices = state.oracle.quote_prices()  # quotes follow the emulated Pyth feeds
    out_amount = quote(in_mint, out_mint, amount, prices)
    if hostile is not None and hostile.kind == FaultKind.LOW_QUOTE:  # far below the market
        factor = Decimal(str(hostile.params.get("factor", "0.01")))
        out_amount = int(out_amount * factor)
        hostile = None  # the transaction is otherwise honest
    slippage = int(query.get("slippageBps", "50")) if query.get("slippageBps", "").isdigit() else 50
    request_id = state.request_id()
    answer: dict[str, Any] = {
        "mode": "manual" if "slippageBps" in query else "ultra",
        "inputMint": in_mint,
        "outputMint": out_mint,
        "inAmount": str(amount),
        "outAmount": str(out_amount),
        "otherAmountThreshold": str(out_amount * (10_000 - slippage) // 10_000),
        "swapMode": "ExactIn",
        "slippageBps": slippage,
        "priceImpactPct": "0",
        "priceImpact": 0.0,
        "routePlan": [
            {
                "swapInfo": {
                    "ammKey": str(state.pubkey()),
                    "label": "EmulatorAMM",
                    "inputMint": in_mint,
                    "outputMint": out_mint,
                    "inAmount": str(amount),
                    "outAmount": str(out_amount),
                    "feeAmount": "0",
                    "feeMint": out_mint,
                },
                "percent": 100,
                "bps": 10_000,
            }
        ],
        "feeMint": out_mint,
        "feeBps": 10,
        "platformFee": {"amount": "0", "feeBps": 10},
        "signatureFeeLamports": 5000,
        "signatureFeePayer": None,
        "prioritizationFeeLamports": 15_000,
        "prioritizationFeePayer": None,
        "rentFeeLamports": 0,
        "rentFeePayer": None,
        "swapType": "aggregator",
        "router": "metis",
        "transaction": None,
        "gasless": False,
        "requestId": request_id,
        "totalTime": 7,
        "taker": None,
        "inUsdValue": float(usd_value(in_mint, amount, prices)),
        "outUsdValue": float(usd_value(out_mint, out_amount, prices)),
        "swapUsdValue": float(usd_value(in_mint, amount, prices)),
    }
    taker_text = query.get("taker")
    if not taker_text:
        return json_response(200, answer)
    taker = parse_pubkey(taker_text)
    if taker is None:
        return json_response(400, {"error": "Invalid taker"})
    answer["taker"] = taker_text
    ledger = state.ledger
    extra: dict[str, Any] = {"amms": [_amm(request_id, n) for n in range(2)]}
    if v2:
        height = state.block_height() + VALID_BLOCKS
        answer["lastValidBlockHeight"] = str(height)
        extra.update(api="swap-v2", last_valid_block_height=height)
    not_built = {"transaction": ""}  # "" (null means no taker), on both APIs
    if ledger.balance(taker_text, in_mint) < amount:
        answer.update(errorCode=1, errorMessage="Insufficient funds", **not_built)
        return json_response(200, answer)
    sol_needed = GAS_RESERVE_LAMPORTS + (amount if in_mint == SOL_MINT else 0)
    if ledger.balance(taker_text, SOL_MINT) < sol_needed:
        answer.update(errorCode=2, errorMessage="Top up 0.01 SOL for gas", **not_built)
        return json_response(200, answer)
    answer["transaction"] = issue(
        state,
        "swap",
        taker,
        hostile,
        request_id=request_id,
        input_mint=in_mint,
        output_mint=out_mint,
        in_amount=amount,
        out_amount=out_amount,
        extra=extra,
        shape={"slippage_bps": slippage},
    )
    return json_response(200, answer)


def _amm(request_id: str, n: int) -> str:
    """A stable AMM key for route `n` of a swap (no draw from the seeded generator)."""
    return str(Pubkey(hashlib.sha256(f"{request_id}:{n}".encode()).digest()))
