"""What the client sends, against each spec (issue 30): a swap API's /order takes
only its own parameters (refused before sending otherwise); getRecurringOrders
always carries ``mint``; the plan schema accepts payer, closeAuthority, swapMode
and says when the plan's named API does not take one."""

from __future__ import annotations

import httpx
import pytest

from jupcron.api.client import JupiterClient
from jupcron.api.models import SwapOrder
from jupcron.errors import ApiGarbageError, ApiRejectedError
from jupcron.plans import rules, schema

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
WALLET = "BQ72nSv9f3PRyRKCBnHLVrerrv37CYTHm5h3s9VSGQDV"
BASE = {"inputMint": USDC, "outputMint": SOL, "amount": 5}


def client(answer: dict[str, object], seen: list[httpx.Request]) -> JupiterClient:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answer)

    return JupiterClient("http://api", api_key=None, transport=httpx.MockTransport(handle),
                         rate_limit=1000, max_attempts=2, sleep=lambda s: None)  # fmt: skip


@pytest.mark.parametrize(("call", "foreign"), [("ultra_order", "slippageBps"),
                                               ("ultra_order", "swapMode"),
                                               ("swap_order", "closeAuthority")])  # fmt: skip
def test_a_parameter_the_api_does_not_list_is_never_sent(call: str, foreign: str) -> None:
    seen: list[httpx.Request] = []
    api = client({}, seen)
    with pytest.raises(ApiRejectedError, match=foreign):
        getattr(api, call)(WALLET, {**BASE, foreign: "x"})
    assert seen == []


def test_each_api_takes_its_own_parameters() -> None:
    seen: list[httpx.Request] = []
    api = client({"requestId": "r", "transaction": "AQ==", "inAmount": "5", "outAmount": "6"}, seen)
    api.ultra_order(WALLET, {**BASE, "payer": WALLET, "closeAuthority": WALLET})
    api.swap_order(WALLET, {**BASE, "payer": WALLET, "swapMode": "ExactIn", "slippageBps": 30})
    ultra, v2 = (dict(r.url.params) for r in seen)
    assert ultra["closeAuthority"] == WALLET
    assert "swapMode" not in ultra
    assert v2["swapMode"] == "ExactIn"
    assert v2["slippageBps"] == "30"


def test_a_swap_v2_answer_with_only_an_error_is_a_skip_not_a_parse_error() -> None:
    seen: list[httpx.Request] = []
    order = client({"error": "No routes found"}, seen).swap_order(WALLET, BASE)
    assert isinstance(order, SwapOrder)
    assert order.skipped
    assert order.skip_reason == "No routes found"
    assert len(seen) == 1


@pytest.mark.parametrize("answer", [{}, {"transaction": "AQ==", "inAmount": "5"}])
def test_a_swap_v2_answer_with_nothing_to_act_on_is_unreadable(answer: dict[str, str]) -> None:
    with pytest.raises(ApiGarbageError):
        client(answer, []).swap_order(WALLET, BASE)


def test_get_recurring_orders_always_sends_mint() -> None:
    seen: list[httpx.Request] = []
    api = client({"user": WALLET, "orderStatus": "active", "time": [], "page": 1,
                  "totalPages": 1}, seen)  # fmt: skip
    api.recurring_orders(WALLET, "active", 1)
    api.recurring_orders(WALLET, "active", 1, mint=USDC)
    assert [r.url.params.get("mint") for r in seen] == ["", USDC]


def test_the_plan_schema_takes_each_swap_apis_parameters() -> None:
    request = schema.SwapRequest.model_validate(
        {**BASE, "payer": WALLET, "closeAuthority": WALLET, "swapMode": "ExactIn"}
    )
    assert (request.payer, request.close_authority, request.swap_mode) == (
        WALLET,
        WALLET,
        "ExactIn",
    )
    with pytest.raises(ValueError, match="ExactIn"):
        schema.SwapRequest.model_validate({**BASE, "swapMode": "ExactOut"})
    v2 = [f.message for f in rules.checks(request, swap_api="swap-v2")]
    assert v2 == ["closeAuthority is not a parameter of swap-v2's /order (only ultra-v1's)"]
    ultra = [f.message for f in rules.checks(request, swap_api="ultra-v1") if not f.warning]
    assert ultra == ["swapMode is not a parameter of ultra-v1's /order (only swap-v2's)"]
    assert rules.checks(request) == []  # the config decides: the run records what it left out
    lone = schema.SwapRequest.model_validate({**BASE, "closeAuthority": WALLET})
    assert "closeAuthority requires payer" in rules.checks(lone)[0].message


def test_a_query_is_passed_or_refused_the_same_every_time() -> None:
    """A query that passed its check once is not validated again; one that fails is
    refused every time, nothing sent. 1, 1.0 and True are equal (as dict keys) but
    only the integer is an amount."""
    seen: list[httpx.Request] = []
    api = client({"requestId": "r", "transaction": "AQ==", "inAmount": "1", "outAmount": "6"}, seen)
    for _ in range(2):
        api.swap_order(WALLET, {**BASE, "amount": 1})
        for amount in (True, 1.0, "1"):
            with pytest.raises(ApiRejectedError, match="amount"):
                api.swap_order(WALLET, {**BASE, "amount": amount})
        with pytest.raises(ApiRejectedError, match="closeAuthority"):
            api.swap_order(WALLET, {**BASE, "amount": 1, "closeAuthority": WALLET})
        with pytest.raises(ApiRejectedError, match="amount"):  # not scalars: checked each time
            api.swap_order(WALLET, {**BASE, "amount": [1]})
    assert [r.url.params["amount"] for r in seen] == ["1", "1"]


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "Success", "signature": "s", "slot": "12", "code": 0,
         "totalInputAmount": "5", "swapEvents": [{"inputMint": USDC, "inputAmount": "5",
         "outputMint": SOL, "outputAmount": 7, "ammKey": "a"}]},
        {"status": "Failed", "code": -1004, "message": "expired"},
        {"status": "Success", "signature": "s", "raw": {"theirs": 1}},  # a field named raw
    ],
)  # fmt: skip
def test_an_execute_answer_is_read_with_itself_as_raw(answer: dict[str, object]) -> None:
    from jupcron.api.models import ExecuteResult

    result = client(answer, []).execute_swap("c2lnbmVk", "r", 9)
    fields = {**answer, "operation": "execute_swap", "httpStatus": 200}
    expected = ExecuteResult.model_validate(fields).model_copy(update={"raw": answer})
    assert result == expected
    assert result.raw == answer
    assert result.model_fields_set == expected.model_fields_set
