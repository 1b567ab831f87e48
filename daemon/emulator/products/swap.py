"""Ultra v1 and Swap V2 ``GET /order``: a quote and, for a taker who can pay,
an unsigned swap transaction recorded in the ledger (`orders.issue`).

Swap V2's answer is Ultra's plus ``lastValidBlockHeight`` (a string: the
emulated block height now plus 150 blocks, `State.block_height`); the order
remembers its API and height for execute. Both APIs answer ``transaction: ""``
(not null: null means no taker) with an ``errorCode`` when the route cannot be
built for this taker (openapi-spec/ultra/ultra.yaml and swap/v2/swap.yaml).

With the fault ``rfq`` (and jupiterz not in ``excludeRouters``) the JupiterZ
router wins the quote: the answer is the docs' "RFQ Swap" example's shape
(``router: "jupiterz"``, ``swapType: "rfq"``, gasless, ``maker``, ``quoteId``,
``expireAt``, no ``lastValidBlockHeight``) and the transaction a market maker's
fill (`txbuild.build_rfq_fill`): the maker pays the fee and signs first, the
taker second. The maker's key is derived from the requestId (`market_maker`),
so execute can sign as the maker would."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from jupcron.emulator import txbuild
from jupcron.emulator.common import (
    SWAP_FEE_BPS,
    VALID_BLOCKS,
    EmuResponse,
    State,
    json_response,
    parse_pubkey,
    quote,
    usd_value,
)
from jupcron.emulator.faults import Fault, FaultKind
from jupcron.emulator.ledger import SOL_MINT, IssuedOrder
from jupcron.emulator.orders import GAS_RESERVE_LAMPORTS, issue

RFQ_FEE_BPS = 2  # the docs' RFQ example: feeBps 2, taken from the output
# who pays what of an order; null in a quote without a taker
PAYER_FIELDS = ("signatureFeePayer", "prioritizationFeePayer", "rentFeePayer")


def ultra_order(state: State, query: Mapping[str, str], hostile: Fault | None) -> EmuResponse:
    return _swap_order(state, query, hostile, v2=False)


def swap_order(state: State, query: Mapping[str, str], hostile: Fault | None) -> EmuResponse:
    return _swap_order(state, query, hostile, v2=True)


def market_maker(request_id: str) -> Keypair:
    """The emulated market maker quoting request `request_id` (a key per quote, as the
    real makers vary): derived, so execute signs the fill with the key it was built for."""
    seed = hashlib.sha256(f"jupcron-emulator-maker:{request_id}".encode()).digest()
    return Keypair.from_seed(seed)


def _rfq_wins(state: State, query: Mapping[str, str], v2: bool) -> bool:
    """Whether JupiterZ wins this quote: an ``rfq`` fault, unless the request excludes
    the router (then the fault waits for a request that does not)."""
    if "jupiterz" in query.get("excludeRouters", "").split(","):
        return False
    operation = "swap_order" if v2 else "ultra_order"
    return state.faults.take(operation, kinds=(FaultKind.RFQ,), request=query) is not None


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
    if _rfq_wins(state, query, v2):
        return _rfq_order(state, query, request_id, amount, out_amount, v2=v2)
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
        # the platform fee is taken from the input (what execute's amounts show:
        # `execute._answer`), so the input is the fee mint and the fee its share of it
        "feeMint": in_mint,
        "feeBps": SWAP_FEE_BPS,
        "platformFee": {
            "amount": str(amount * SWAP_FEE_BPS // 10_000),
            "feeBps": SWAP_FEE_BPS,
            "feeMint": in_mint,
        },
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
        **_usd_values(in_mint, out_mint, amount, out_amount, prices),
    }
    found = _taker_of(query, answer)
    if not isinstance(found, tuple):
        return found
    taker_text, taker = found
    # the taker pays its own fees on an aggregator order: the real answers name it as
    # every payer (swap.yaml: "check signatureFeePayer == taker on every response")
    answer.update(dict.fromkeys(PAYER_FIELDS, taker_text))
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
    sized = _priced(query) if v2 else {}
    if sized:
        answer["prioritizationFeeLamports"] = _priority_fee(sized["compute_unit_price"])
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
        **sized,
    )
    return json_response(200, answer)


def _priced(query: Mapping[str, str]) -> dict[str, int]:
    """Swap V2's ``priorityFeeLamports`` (with ``broadcastFeeType`` maxCap or exactFee:
    the priority fee is at most that): the compute-unit price that pays no more on the
    emulator's compute-unit limit, rounded down as an API sizing it must round (the
    runtime rounds the fee up); {} when the order was not given one (Ultra never is)."""
    text = query.get("priorityFeeLamports", "")
    if not text.isascii() or not text.isdigit():
        return {}
    return {"compute_unit_price": int(text) * 1_000_000 // txbuild.DEFAULT_CU_LIMIT}


def _priority_fee(price: int) -> int:
    """The priority fee a compute-unit price comes to on the emulator's limit."""
    return -(-price * txbuild.DEFAULT_CU_LIMIT // 1_000_000)


def _rfq_order(
    state: State, query: Mapping[str, str], request_id: str, amount: int, quoted: int, *, v2: bool
) -> EmuResponse:
    """The JupiterZ answer (the docs' "Example response of RFQ Swap"): an exact fill,
    no slippage, the maker's fee taken from the output; for a taker who holds the
    input, a fill the maker pays the fee of (no SOL reserve asked of the taker)."""
    in_mint, out_mint = query["inputMint"], query["outputMint"]
    prices = state.oracle.quote_prices()
    maker = market_maker(request_id).pubkey()
    fee = math.ceil(quoted * RFQ_FEE_BPS / 10_000)
    out_amount = quoted - fee
    expire_at = int(state.clock() + state.blockhash_ttl)  # the blockhash bounds it anyway
    answer: dict[str, Any] = {
        "mode": "ultra",
        "inputMint": in_mint,
        "outputMint": out_mint,
        "inAmount": str(amount),
        "outAmount": str(out_amount),
        "otherAmountThreshold": str(out_amount),
        "swapMode": "ExactIn",
        "slippageBps": 0,
        "priceImpactPct": "0",
        "priceImpact": 0.0,
        "routePlan": [
            {
                "swapInfo": {
                    "ammKey": str(maker),
                    "label": "JupiterZ",
                    "inputMint": in_mint,
                    "outputMint": out_mint,
                    "inAmount": str(amount),
                    "outAmount": str(out_amount),
                    "feeAmount": "0",
                    "feeMint": "11111111111111111111111111111111",
                },
                "percent": 100,
                "bps": 10_000,  # the docs' newest RFQ example; RoutePlanStep requires it
            }
        ],
        "feeBps": RFQ_FEE_BPS,
        "platformFee": {"amount": str(fee), "feeBps": RFQ_FEE_BPS},
        "signatureFeeLamports": 5000,
        "signatureFeePayer": str(maker),
        "prioritizationFeeLamports": 0,
        "prioritizationFeePayer": str(maker),
        "rentFeeLamports": 0,
        "rentFeePayer": None,
        "gasless": True,
        "swapType": "rfq",
        "router": "jupiterz",
        "transaction": None,
        "requestId": request_id,
        "quoteId": str(state.request_id()),
        "maker": str(maker),
        "expireAt": str(expire_at),
        "totalTime": 721,
        "taker": None,
        **_usd_values(in_mint, out_mint, amount, out_amount, prices),
    }
    found = _taker_of(query, answer)
    if not isinstance(found, tuple):
        return found
    taker_text, taker = found
    if state.ledger.balance(taker_text, in_mint) < amount:  # RFQ errorCode 1 (swap.yaml)
        message = "Insufficient balance to fund the swap"
        answer.update(errorCode=1, errorMessage=message, error=message, transaction="")
        return json_response(200, answer)
    state.ledger.balance(taker_text, SOL_MINT)  # a wallet it issues to is one it knows
    tx = txbuild.build_rfq_fill(
        taker, maker, input_mint=in_mint, output_mint=out_mint, amount=amount,
        out_amount=out_amount, expire_at=expire_at, rng=state.rng,
    )  # fmt: skip
    extra: dict[str, Any] = {"router": "jupiterz", "maker": str(maker), "expire_at": expire_at}
    if v2:
        extra["api"] = "swap-v2"
    state.ledger.issue(
        IssuedOrder(
            request_id=request_id, kind="swap", owner=taker_text,
            message=txbuild.message_bytes(tx), issued_at=state.clock(), input_mint=in_mint,
            output_mint=out_mint, in_amount=amount, out_amount=out_amount, extra=extra,
        )
    )  # fmt: skip
    answer["transaction"] = txbuild.to_b64(tx)
    return json_response(200, answer)


def _amm(request_id: str, n: int) -> str:
    """A stable AMM key for route `n` of a swap (no draw from the seeded generator)."""
    return str(Pubkey(hashlib.sha256(f"{request_id}:{n}".encode()).digest()))


def _usd_values(
    in_mint: str, out_mint: str, amount: int, out_amount: int, prices: Any
) -> dict[str, float]:
    """An order answer's USD values of what goes in and what comes out."""
    return {
        "inUsdValue": float(usd_value(in_mint, amount, prices)),
        "outUsdValue": float(usd_value(out_mint, out_amount, prices)),
        "swapUsdValue": float(usd_value(in_mint, amount, prices)),
    }


def _taker_of(query: Mapping[str, str], answer: dict[str, Any]) -> tuple[str, Pubkey] | EmuResponse:
    """The order's taker (set on `answer`), or the answer to give now: the quote alone
    when the order names no taker, a 400 for one that is no address."""
    taker_text = query.get("taker")
    if not taker_text:
        return json_response(200, answer)
    taker = parse_pubkey(taker_text)
    if taker is None:
        return json_response(400, {"error": "Invalid taker"})
    answer["taker"] = taker_text
    return taker_text, taker
