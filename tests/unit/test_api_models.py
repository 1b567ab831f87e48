"""Contract tests: the documented example payloads of
docs/jupiter-api-notes.md parse into our models."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from jupcron.api.models import (
    EXECUTE_CODES,
    ErrorEnvelope,
    ExecuteResult,
    OrderResponse,
    UltraOrder,
)
from jupcron.api.portfolio import Portfolio


def execute(payload: dict[str, Any], operation: str, http_status: int = 200) -> ExecuteResult:
    return ExecuteResult.model_validate(
        {**payload, "operation": operation, "httpStatus": http_status}
    )


def test_recurring_create_order_response() -> None:
    got = OrderResponse.model_validate({"requestId": "1d1f3586-aaaa", "transaction": "AQAAAA=="})
    assert (got.request_id, got.transaction, got.order) == ("1d1f3586-aaaa", "AQAAAA==", None)


def test_trigger_create_order_response_keeps_order_account() -> None:
    got = OrderResponse.model_validate(
        {
            "order": "CFG9Bmppz7eZbna96UizACJPYT3UgVgps3KkMNNo6P4k",
            "transaction": "AQAAAA...",
            "requestId": "370100dd-1a85-421b-9278-27f0961ae5f4",
        }
    )
    assert got.order == "CFG9Bmppz7eZbna96UizACJPYT3UgVgps3KkMNNo6P4k"


@pytest.mark.parametrize(
    ("payload", "code", "error", "cause"),
    [
        (
            {"code": 400, "error": "Order is valued at 2.99 USDC, minimum is 100.00 USDC",
             "status": "Bad Request"},
            400, "Order is valued at 2.99 USDC, minimum is 100.00 USDC", None,
        ),
        (  # the first version of the docs used `message`
            {"code": 400, "message": "Order is valued at 2.99 USDC, minimum is 100.00 USDC"},
            400, "Order is valued at 2.99 USDC, minimum is 100.00 USDC", None,
        ),
        (
            {"error": "invalid create order request",
             "cause": "input mint making amount must be at least 5 USD, received: 2", "code": 400},
            400, "invalid create order request",
            "input mint making amount must be at least 5 USD, received: 2",
        ),
        ({"error": "unable to get latest blockhash", "code": 500}, 500,
         "unable to get latest blockhash", None),
        ({"error": "no matching orders found", "code": 400}, 400, "no matching orders found", None),
        ({"code": 403, "message": "API key does not have access to this endpoint"}, 403,
         "API key does not have access to this endpoint", None),
        ({"error": "Failed to get quotes"}, None, "Failed to get quotes", None),
    ],
)  # fmt: skip
def test_error_envelopes(
    payload: dict[str, Any], code: int | None, error: str, cause: str | None
) -> None:
    got = ErrorEnvelope.model_validate(payload)
    assert (got.code, got.error, got.cause) == (code, error, cause)


def test_recurring_execute_success_and_failure() -> None:
    ok = execute(
        {"signature": "5sig", "status": "Success",
         "order": "4DWzP4TdTsuwvYMaMWrRqzya4UTFKFoVjfUWNWh8zhzd", "error": None},
        "execute_recurring",
    )  # fmt: skip
    assert ok.succeeded
    assert ok.order == "4DWzP4TdTsuwvYMaMWrRqzya4UTFKFoVjfUWNWh8zhzd"
    bad = execute(
        {"signature": "5sig", "status": "Failed", "order": None,
         "error": "Insufficient funds for the operation requested."},
        "execute_recurring",
    )  # fmt: skip
    assert not bad.succeeded
    assert bad.error == "Insufficient funds for the operation requested."
    assert not bad.retry_with_fresh_order


@pytest.mark.parametrize(
    ("payload", "http", "succeeded"),
    [
        ({"status": "Success", "signature": "5UfD", "code": 0}, 200, True),
        ({"error": "custom program error code: 1", "code": 500, "signature": "x",
          "status": "Failed"}, 500, False),
        ({"error": "invalid transaction", "code": 400, "status": "Failed"}, 400, False),
        ({"error": "unable to confirm transaction", "code": 500, "signature": "38Ct",
          "status": "Failed"}, 500, False),
    ],
)  # fmt: skip
def test_trigger_execute_examples(payload: dict[str, Any], http: int, succeeded: bool) -> None:
    got = execute(payload, "execute_trigger", http)
    assert got.succeeded is succeeded
    assert got.http_status == http
    assert got.code == payload["code"]


def test_ultra_order_metis_example() -> None:
    payload = {
        "mode": "ultra", "inAmount": "100000000", "outAmount": "461208958",
        "otherAmountThreshold": "460024271", "swapMode": "ExactIn", "slippageBps": 26,
        "priceImpactPct": "-0.0001311599520149334",
        "routePlan": [{"swapInfo": {"ammKey": "HTvj", "label": "MeteoraDLMM"}, "percent": 52}],
        "feeMint": "So11", "feeBps": 2, "taker": "taker", "gasless": False,
        "signatureFeeLamports": 5000, "transaction": "AQAB", "prioritizationFeeLamports": 696237,
        "rentFeeLamports": 0, "inputMint": "EPjF", "outputMint": "So11", "swapType": "aggregator",
        "router": "metis", "requestId": "019974a8-5fbb-7395-9355-9ebf8f844884",
        "inUsdValue": 99.97, "outUsdValue": 99.95, "priceImpact": -0.0131,
        "swapUsdValue": 99.97, "totalTime": 359,
    }  # fmt: skip
    got = UltraOrder.model_validate(payload)
    assert got.in_amount == "100000000"
    assert got.out_amount == "461208958"
    assert got.router == "metis"
    assert not got.gasless
    assert not got.skipped
    assert got.prioritization_fee_lamports == 696237


def test_ultra_order_rfq_variant_and_legacy_router_name() -> None:
    got = UltraOrder.model_validate(
        {"requestId": "r", "transaction": "AQAB", "inAmount": "1", "outAmount": "2",
         "gasless": True, "swapType": "rfq", "router": "jupiterz", "quoteId": "q",
         "expireAt": "1758598698"}
    )  # fmt: skip
    assert got.gasless
    assert got.router == "jupiterz"
    assert (
        UltraOrder.model_validate({**got.model_dump(by_alias=True), "router": "iris"}).router
        == "iris"
    )


@pytest.mark.parametrize(("code", "reason"), [(1, "insufficient funds"), (2, "needs SOL for gas"),
                                              (3, "below gasless minimum")])  # fmt: skip
def test_ultra_order_error_codes_mean_skip(code: int, reason: str) -> None:
    got = UltraOrder.model_validate(
        {"requestId": "r", "transaction": None, "inAmount": "1", "outAmount": "0",
         "errorCode": code, "errorMessage": "display only"}
    )  # fmt: skip
    assert got.skipped
    assert got.skip_reason == reason


def test_ultra_execute_success_example() -> None:
    got = execute(
        {"status": "Success", "signature": "5UfD", "slot": "324307186", "code": 0,
         "totalInputAmount": "100000000", "totalOutputAmount": "17057460",
         "inputAmountResult": "100000000", "outputAmountResult": "17057460",
         "swapEvents": [{"inputMint": "So11", "inputAmount": "100000000", "outputMint": "EPjF",
                         "outputAmount": "17057460"}]},
        "execute_ultra",
    )  # fmt: skip
    assert got.succeeded
    assert got.slot == 324307186
    assert (got.input_amount, got.output_amount) == ("100000000", "17057460")
    assert got.swap_events[0].output_amount == "17057460"


@pytest.mark.parametrize(
    ("payload", "fresh"),
    [
        ({"code": -1, "error": "Order not found, it might have expired"}, True),
        ({"status": "Failed", "slot": "0", "signature": "s", "code": -1005,
          "error": "Transaction expired"}, False),
        ({"status": "Failed", "slot": "0", "code": -2005, "error": "Internal error"}, False),
        ({"status": "Failed", "signature": "s", "slot": "368661931", "code": 6001,
          "error": "Slippage tolerance exceeded", "totalInputAmount": "1000000",
          "totalOutputAmount": "4647512", "inputAmountResult": "1000000",
          "outputAmountResult": "4648441", "swapEvents": []}, False),
        ({"status": "Failed", "error": "custom program error: #6023", "code": 4615026}, False),
        ({"status": "Failed", "code": "-1000", "error": "Failed to land"}, True),
        ({"status": "Failed", "code": -2003, "error": "Quote expired"}, False),
        ({"status": "Failed", "code": -1002, "error": "Invalid transaction"}, False),
    ],
)  # fmt: skip
def test_ultra_execute_failures_and_fresh_order_mapping(
    payload: dict[str, Any], fresh: bool
) -> None:
    got = execute(payload, "execute_ultra")
    assert not got.succeeded
    assert got.retry_with_fresh_order is fresh
    assert isinstance(got.code, int)


def test_ultra_minus_one_has_no_status() -> None:
    got = execute(
        {"code": -1, "error": "Order not found, it might have expired"}, "execute_ultra", 400
    )
    assert got.status is None
    assert got.code == -1


def test_portfolio_spec_example() -> None:
    payload = {
        "date": 1710000000000, "owner": "BQ72nSv9f3PRyRKCBnHLVrerrv37CYTHm5h3s9VSGQDV",
        "fetcherReports": [{"id": "jupiter-exchange", "status": "ok", "duration": 120}],
        "elements": [{"type": "multiple", "label": "Wallet", "platformId": "native-stake",
                      "name": "Native Stake",
                      "data": {"assets": [{"type": "token", "networkId": "solana", "value": 1713.40,
                                           "data": {"address": "So11111111111111111111111111111111111111112",
                                                    "amount": 10.0, "price": 171.34}}]}}],
        "duration": 450,
    }  # fmt: skip
    got = Portfolio.model_validate(payload)
    assert got.fetcher_reports[0].status == "ok"
    assert list(got.by_platform()) == ["native-stake"]
    assert got.total_value == Decimal(0)  # the element itself carries no value here


@pytest.mark.parametrize(
    ("model", "payload"),
    [
        (OrderResponse, {"requestId": 12345, "transaction": "AQAB"}),
        (OrderResponse, {"requestId": "r", "transaction": True}),
        (OrderResponse, {"requestId": "r"}),
        (UltraOrder, {"requestId": "r", "inAmount": "1.5", "outAmount": "1"}),
        (UltraOrder, {"requestId": "r", "inAmount": {"amount": 1}, "outAmount": "1"}),
        (ExecuteResult, {"status": 7}),
        (ExecuteResult, {"status": "Success", "signature": ["x"]}),
        (ExecuteResult, {"status": "Success", "slot": "12.5"}),
        (Portfolio, {"owner": "x", "elements": "none"}),
    ],
)
def test_wrong_types_on_fields_we_use_are_refused(model: Any, payload: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(payload)


def test_unknown_fields_are_ignored() -> None:
    got = OrderResponse.model_validate({"requestId": "r", "transaction": "t", "brandNew": {"x": 1}})
    assert got.request_id == "r"


@pytest.mark.parametrize("code", sorted(EXECUTE_CODES))
def test_every_documented_execute_code_has_its_meaning_and_its_settlement(code: int) -> None:
    """Each code the docs list (ultra/response.mdx, swap/order-and-execute.mdx): its
    meaning; a code after which the transaction was sent but its fate is unknown is
    settled like a lost answer, one after which a fresh order is safe says so."""
    for operation in ("execute_ultra", "execute_swap"):
        status = "Success" if code == 0 else "Failed"
        result = execute({"status": status, "code": code}, operation)
        assert result.meaning == EXECUTE_CODES[code]
        assert result.may_have_landed is (code in (-1006, -2003, -2005))
        assert result.succeeded is (code == 0)
        assert not (result.may_have_landed and result.retry_with_fresh_order)
    recurring = execute({"status": "Failed", "code": code}, "execute_recurring")
    assert recurring.meaning is None  # the order APIs' codes are HTTP-like: not these
