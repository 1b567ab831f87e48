"""Every example Jupiter documents (the OpenAPI files' request, query and response
examples, and the docs pages' JSON answer blocks; tests/fixtures/openapi) read
through our models: each parses, and the fields jupcron uses come out as given.

An example of an operation jupcron does not call is listed as such (``UNUSED``),
so a new documented example shows up here as a failure until it is placed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jupcron.api import trigger_v2_models as v2
from jupcron.api.models import (
    ErrorEnvelope,
    ExecuteResult,
    OrderResponse,
    SwapOrder,
    UltraOrder,
)
from jupcron.api.orders import parse_page
from jupcron.api.portfolio import Portfolio
from jupcron.plans import schema
from jupcron.products.swap import model as swap_model
from jupcron.products.trigger import model as trigger_model
from tests.fixtures.openapi_spec import SPECS, Example, examples, pages, validator

Check = Callable[[Any], None]


def _order_response(body: Any) -> None:
    got = OrderResponse.model_validate(body)
    assert (got.request_id, got.transaction) == (body["requestId"], body["transaction"])
    assert got.order == body.get("order")


def _execute(operation: str) -> Check:
    def check(body: Any) -> None:
        got = ExecuteResult.model_validate({**body, "operation": operation})
        assert got.status == body.get("status")
        assert got.signature == body.get("signature")
        assert got.error == (body.get("error") or body.get("message"))
        code = body.get("code")
        assert got.code == (int(code) if isinstance(code, str) else code)
        if "slot" in body:
            assert got.slot == int(body["slot"])
        for ours, theirs in (("input_amount", "totalInputAmount"),
                             ("output_amount", "totalOutputAmount")):  # fmt: skip
            assert getattr(got, ours) == body.get(theirs)
        assert len(got.swap_events) == len(body.get("swapEvents") or [])
        if got.succeeded:
            assert got.meaning in (None, "success")

    return check


def _execute_request(body: Any) -> None:
    # what the client posts: exactly these two fields (Swap V2 adds its block height)
    assert set(body) == {"signedTransaction", "requestId"}


def _swap_order(model: type[UltraOrder]) -> Check:
    def check(body: Any) -> None:
        got = model.model_validate(body)
        assert got.request_id == body.get("requestId")
        assert got.transaction == body.get("transaction")
        assert got.in_amount == body.get("inAmount")
        assert got.out_amount == body.get("outAmount")
        assert got.router == body.get("router")
        assert got.gasless == body.get("gasless", False)
        assert got.slippage_bps == body.get("slippageBps")
        assert got.fee_bps == body.get("feeBps")
        assert not got.skipped  # a built (or taker-less) quote

    return check


def _swap_query(body: Any) -> None:
    """The spec's query (Swap V2 /order), minus the taker the daemon fills in, is a
    valid plan request and a valid Swap V2 request, and not an Ultra one
    (``slippageBps`` is Swap V2's only)."""
    given = {k: v for k, v in body.items() if k != "taker"}
    full = {"inputMint": "So11111111111111111111111111111111111111112",
            "outputMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "amount": 1_000_000_000, **given}  # fmt: skip
    full["referralAccount"] = full["payer"]  # referralFee must go with an account
    plan = schema.SwapRequest.model_validate(full)
    assert plan.payer == body["payer"]
    assert plan.slippage_bps == body["slippageBps"]
    assert plan.exclude_routers == body["excludeRouters"]
    wire = dict(schema.request_body(plan))
    swap_model.SwapV2OrderRequest.model_validate(wire)
    with pytest.raises(ValueError, match="slippageBps"):
        swap_model.UltraOrderRequest.model_validate(wire)


def _trigger_cancel_request(body: Any) -> None:
    request = {k: v for k, v in body.items() if k != "maker"}
    plan = schema.TriggerCancelRequest.model_validate(request)
    assert plan.order == body["order"]
    api = trigger_model.TriggerCancelRequest.model_validate(request)
    assert api.wire_compute_unit_price == str(body.get("computeUnitPrice", "auto"))


def _error(body: Any) -> None:
    got = ErrorEnvelope.model_validate(body)
    assert got.error == (body.get("error") or body.get("message"))
    assert got.code == body.get("code")
    assert got.cause == body.get("cause")


def _listing(array: str) -> Check:
    def check(body: Any) -> None:
        page = parse_page(body, array)
        assert page.problems == []
        assert len(page.orders) == len(body[array])
        assert (page.page, page.total_pages) == (body["page"], body["totalPages"])
        for order, raw in zip(page.orders, body[array], strict=True):
            assert order.order_key == raw["orderKey"]

    return check


def _model(model: type[Any], **fields: str) -> Check:
    """`model` parses it; each attribute equals the body's field (wire name)."""

    def check(body: Any) -> None:
        got = model.model_validate(body)
        for attribute, wire in fields.items():
            assert str(getattr(got, attribute)) == str(body[wire]), attribute

    return check


def _history(body: Any) -> None:
    page = v2.parse_history(body)
    assert page.problems == []
    assert [o.id for o in page.orders] == [o["id"] for o in body["orders"]]


def _portfolio(body: Any) -> None:
    got = Portfolio.model_validate(body)
    assert got.owner == body.get("owner")
    assert len(got.elements) == len(body.get("elements", []))
    sol = "So11111111111111111111111111111111111111112"
    # its one element is a native stake (labelled Wallet): 10 SOL staked, none spendable
    assert got.elements[0].platform_id == "native-stake"
    assert got.balance_of(sol) == 0
    assert list(got.by_platform()) == [e["platformId"] for e in body["elements"]]


def _unused(body: Any) -> None:
    """An operation jupcron does not call (kept listed so new examples are placed)."""


SPEC_CHECKS: dict[str, Check] = {
    "ultra GET /order 200": _swap_order(UltraOrder),
    "ultra POST /execute request": _execute_request,
    "ultra POST /execute 200": _execute("execute_ultra"),
    "swap GET /order query": _swap_query,
    "swap GET /build query": _unused,
    "recurring POST /cancelOrder 200": _order_response,
    "recurring POST /createOrder 200": _order_response,
    "recurring POST /execute request": _execute_request,
    "recurring POST /execute 200": _execute("execute_recurring"),
    "recurring GET /getRecurringOrders 200": _listing("time"),
    "recurring POST /priceDeposit 200": _order_response,
    "recurring POST /priceWithdraw 200": _order_response,
    "trigger POST /cancelOrders request": _unused,  # batch cancel: issue 30 item 4
    "trigger POST /cancelOrders 200": _unused,
    "trigger POST /cancelOrders 400": _error,
    "trigger POST /cancelOrders 500": _error,
    "trigger POST /createOrder request": _unused,
    "trigger POST /createOrder 200": _order_response,
    "trigger POST /createOrder 400": _error,
    "trigger POST /createOrder 500": _error,
    "trigger POST /cancelOrder request": _trigger_cancel_request,
    "trigger POST /cancelOrder 200": _order_response,
    "trigger POST /cancelOrder 400": _error,
    "trigger POST /cancelOrder 500": _error,
    "trigger POST /execute request": _execute_request,
    "trigger POST /execute 200": _execute("execute_trigger"),
    "trigger POST /execute 400": _execute("execute_trigger"),
    "trigger POST /execute 500": _execute("execute_trigger"),
    "trigger GET /getTriggerOrders 200": _listing("orders"),
    "trigger_v2 POST /auth/challenge request": _unused,  # built by the client
    "trigger_v2 POST /auth/challenge 200": _model(v2.Challenge, type="type", challenge="challenge"),
    "trigger_v2 POST /auth/verify request": _unused,
    "trigger_v2 POST /auth/verify 200": _model(v2.Verified, token="token"),
    "trigger_v2 GET /vault 200": _model(
        v2.Vault, user_pubkey="userPubkey", vault_pubkey="vaultPubkey"
    ),
    "trigger_v2 POST /deposit/craft request": _unused,
    "trigger_v2 POST /deposit/craft 200": _model(
        v2.Deposit, request_id="requestId", transaction="transaction", amount="amount"
    ),
    "trigger_v2 POST /orders/price request": _unused,
    "trigger_v2 POST /orders/price 200": _model(v2.Created, id="id", tx_signature="txSignature"),
    "trigger_v2 PATCH /orders/price/{orderId} request": _unused,
    "trigger_v2 PATCH /orders/price/{orderId} 200": _unused,
    "trigger_v2 POST /orders/price/cancel/{orderId} 200": _model(
        v2.CancelCraft, id="id", transaction="transaction", request_id="requestId"
    ),
    "trigger_v2 POST /orders/price/confirm-cancel/{orderId} request": _unused,
    "trigger_v2 POST /orders/price/confirm-cancel/{orderId} 200": _model(
        v2.Created, id="id", tx_signature="txSignature"
    ),
    "trigger_v2 POST /orders/dca request": _unused,
    "trigger_v2 POST /orders/dca 200": _model(v2.Created, id="id", tx_signature="txSignature"),
    "trigger_v2 POST /orders/dca/cancel/{id} 200": _model(
        v2.CancelCraft,
        id="id",
        request_id="requestId",
        refund_amount="refundAmount",
        rounds_remaining="roundsRemaining",
    ),
    "trigger_v2 POST /orders/dca/confirm-cancel/{id} 200": _model(
        v2.Created, id="id", tx_signature="txSignature"
    ),
    "trigger_v2 GET /orders/history/dca 200": _history,
    "trigger_v2 GET /orders/history/dca/{id} 200": _model(
        v2.HistoryOrder, id="id", input_mint="inputMint", output_mint="outputMint"
    ),
    "portfolio GET /positions/{address} query": _unused,
    "portfolio GET /positions/{address} 200": _portfolio,
    "portfolio GET /platforms 200": _unused,
    "portfolio GET /staked-jup/{address} 200": _unused,
}
ALL = [e for name in SPECS for e in examples(name)]


def test_every_documented_example_is_placed() -> None:
    assert sorted({e.key for e in ALL}) == sorted(SPEC_CHECKS)


@pytest.mark.parametrize("example", ALL, ids=[e.key for e in ALL])
def test_a_spec_example_reads_through_our_models(example: Example) -> None:
    SPEC_CHECKS[example.key](example.body)


PAGE_CHECKS: dict[str, Check] = {
    "recurring_cancel_order": _order_response,
    "create_recurring_order": _order_response,
    "recurring_price_deposit": _order_response,
    "cancel_trigger_order": _order_response,
    "create_trigger_order": _order_response,
    "execute_recurring": _execute("execute_recurring"),
    "execute_trigger": _execute("execute_trigger"),
    "execute_ultra": _execute("execute_ultra"),
    "execute_swap": _execute("execute_swap"),
    "ultra_order": _swap_order(UltraOrder),
    "error": _error,
    "trigger_v2_challenge": _model(v2.Challenge, type="type"),
    "trigger_v2_created": _model(v2.Created, id="id", tx_signature="txSignature"),
    "trigger_v2_history_order": _model(v2.HistoryOrder, id="id", input_mint="inputMint"),
    "trigger_v2_event": _model(v2.OrderEvent, type="type", tx_signature="txSignature"),
    "trigger_v2_deposit": _model(v2.Deposit, request_id="requestId", amount="amount"),
    "trigger_v2_history": _history,
    "trigger_v2_cancel": _model(v2.CancelCraft, id="id", request_id="requestId"),
}
PAGES = pages()


@pytest.mark.parametrize("block", PAGES, ids=[f"{b['page']}:{b['line']}" for b in PAGES])
def test_a_docs_page_answer_reads_through_our_models(block: dict[str, Any]) -> None:
    PAGE_CHECKS[block["operation"]](block["body"])


def test_the_swap_v2_order_answer_the_spec_allows_reads_as_a_skip() -> None:
    """Every field optional, ``error`` in a 200 (swap.yaml): valid for the spec, and
    our model makes a skip with the API's reason of it, not a parse error."""
    for body in ({"error": "Failed to get quotes"},
                 {"requestId": "r", "transaction": "", "errorMessage": "Insufficient funds",
                  "error": "Insufficient funds"}):  # fmt: skip
        validator("swap", "/order", "get", "200").validate(body)
        got = SwapOrder.model_validate(body)
        assert got.skipped
        assert got.skip_reason == body.get("errorMessage", body["error"])
    assert not SwapOrder.model_validate({}).skipped  # nothing at all: not a skip


def test_portfolio_without_the_optional_fields_reads() -> None:
    """The spec's top-level fields are all optional; an element without ``type`` or
    ``platformId`` is kept under ``unknown`` (jupcron needs neither)."""
    validator("portfolio", "/positions/{address}", "get", "200").validate({})
    assert Portfolio.model_validate({}).owner is None
    element = {"label": "Wallet", "data": {"assets": [
        {"data": {"address": "x", "amount": 2}}]}}  # fmt: skip
    got = Portfolio.model_validate({"elements": [element]})
    assert list(got.by_platform()) == ["unknown"]
    assert got.balance_of("x") == 2 * 10**6
