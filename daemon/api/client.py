"""The Jupiter API client: one typed method per API operation (its request checked
against the operation's spec model, its answer parsed into ours), over
`jupcron.api.transport.ApiTransport`, which paces, sends and retries.

Retry rules and the API key's handling: `jupcron.api.transport`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import structlog
from pydantic import SecretStr

from jupcron.api import classify
from jupcron.api.http import Attempt, Observer, backoff
from jupcron.api.models import (
    BatchResponse,
    ExecuteResult,
    OrderResponse,
    SwapOrder,
    UltraOrder,
)
from jupcron.api.orders import OrderPage, TokenFacts
from jupcron.api.pacer import Budget
from jupcron.api.parse import (
    check_query,
    check_request,
    listing_parser,
    model_parser,
    query_value,
    tokens_parser,
)
from jupcron.api.portfolio import Portfolio
from jupcron.api.transport import (
    KEYED_EXECUTE_RATE,
    KEYED_RATE,
    KEYLESS_EXECUTE_RATE,
    KEYLESS_RATE,
    ApiTransport,
)
from jupcron.config import Config
from jupcron.products.recurring.model import RecurringRequest
from jupcron.products.recurring_cancel.model import RecurringCancelRequest
from jupcron.products.swap.model import SwapV2OrderRequest, UltraOrderRequest
from jupcron.products.trigger.model import TriggerCancelRequest
from jupcron.products.trigger_batch.model import TriggerCancelBatchRequest

# Attempt & co. live in .http, the rates in .transport
__all__ = [
    "KEYED_EXECUTE_RATE", "KEYED_RATE", "KEYLESS_EXECUTE_RATE", "KEYLESS_RATE", "SPARE_WAIT",
    "Attempt", "JupiterClient", "Observer", "backoff",
]  # fmt: skip

log = structlog.get_logger(__name__)

Q = TypeVar("Q", bound=UltraOrder)
_Answer = TypeVar("_Answer", OrderResponse, BatchResponse)
SPARE_WAIT = 30.0  # seconds background calls wait for a spare slot before giving up


class JupiterClient(ApiTransport):
    @classmethod
    def from_config(
        cls,
        config: Config,
        api_key: SecretStr | None,
        transport: httpx.BaseTransport | None = None,
        budget_for: Callable[[str, float], Budget] | None = None,
    ) -> JupiterClient:
        api = config.api
        return cls(
            api.base_url,
            api_key=api_key,
            paths=api.paths,
            connect_timeout=api.connect_timeout,
            read_timeout=api.read_timeout,
            rate_limit=api.rate_limit,
            execute_rate_limit=api.execute_rate_limit,
            max_attempts=api.max_attempts,
            transport=transport,
            spare_share=config.follow.share,
            budget_for=budget_for,
        )

    # --- operations --------------------------------------------------------
    def create_recurring_order(
        self, user: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> OrderResponse:
        op = "create_recurring_order"
        checked = check_request(op, RecurringRequest, request)
        if checked.params.price is not None:
            log.warning("recurring_price_params_deprecated", operation=op)
        body = {**request, "user": user}
        time_params = checked.params.time
        if time_params is not None:  # price bounds as exact JSON numbers (stored as text)
            bounds = {"minPrice": time_params.min_price, "maxPrice": time_params.max_price}
            given = dict(request["params"]["time"])
            given.update({k: v for k, v in bounds.items() if k in given and v is not None})
            body["params"] = {**request["params"], "time": given}
        path = f"{self.paths.recurring}/createOrder"
        return self._call(
            op, "POST", path, json=body, parse=model_parser(OrderResponse), observe=observe
        )

    def execute_recurring(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult:
        return self._execute(
            "execute_recurring", self.paths.recurring, signed_transaction, request_id, observe
        )

    def cancel_recurring_order(
        self, user: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> OrderResponse:
        op = "cancel_recurring_order"
        checked = check_request(op, RecurringCancelRequest, request)
        if checked.order is None:  # a pair is the plan's: the API closes one account
            check_request(op, RecurringCancelRequest, {"order": None})
        body = {**checked.wire(checked.order), "user": user}
        path = f"{self.paths.recurring}/cancelOrder"
        return self._call(
            op, "POST", path, json=body, parse=model_parser(OrderResponse), observe=observe
        )

    def cancel_trigger_order(
        self, maker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> OrderResponse:
        return self._trigger_cancel(
            "cancel_trigger_order", TriggerCancelRequest, "cancelOrder", OrderResponse,
            maker, request, observe,
        )  # fmt: skip

    def cancel_trigger_orders(
        self, maker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> BatchResponse:
        return self._trigger_cancel(
            "cancel_trigger_orders", TriggerCancelBatchRequest, "cancelOrders", BatchResponse,
            maker, request, observe,
        )  # fmt: skip

    def _trigger_cancel(
        self, op: str, model: Any, endpoint: str, answer: type[_Answer], maker: str,
        request: Mapping[str, Any], observe: Observer | None,
    ) -> _Answer:  # fmt: skip
        """Trigger v1's cancels: the plan's body with our wallet as ``maker`` and the
        compute-unit price as the API takes it (a string: an integer goes out as its digits)."""
        checked = check_request(op, model, request)
        body = {**request, "computeUnitPrice": checked.wire_compute_unit_price, "maker": maker}
        path = f"{self.paths.trigger}/{endpoint}"
        return self._call(op, "POST", path, json=body, parse=model_parser(answer), observe=observe)

    def execute_trigger(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult:
        return self._execute(
            "execute_trigger", self.paths.trigger, signed_transaction, request_id, observe
        )

    def ultra_order(
        self, taker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> UltraOrder:
        return self._order(
            "ultra_order", self.paths.ultra, UltraOrder, UltraOrderRequest, taker, request, observe
        )

    def quote(
        self, input_mint: str, output_mint: str, amount: int, observe: Observer | None = None
    ) -> UltraOrder:
        """GET /ultra/v1/order without a taker: what `amount` would buy now (a price;
        no transaction is built)."""
        params = {"inputMint": input_mint, "outputMint": output_mint, "amount": str(amount)}
        path = f"{self.paths.ultra}/order"
        parse = model_parser(UltraOrder)
        return self._call("quote", "GET", path, params=params, parse=parse, observe=observe)

    def execute_ultra(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult:
        return self._execute(
            "execute_ultra", self.paths.ultra, signed_transaction, request_id, observe
        )

    def swap_order(
        self, taker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> SwapOrder:
        """Swap V2 ``GET /order`` (Ultra's query): a transaction comes with its
        ``lastValidBlockHeight`` (an RFQ route may send none), ``""`` with an ``errorCode``
        or an ``error`` (its spec: every answer field is optional)."""
        return self._order(
            "swap_order", self.paths.swap, SwapOrder, SwapV2OrderRequest, taker, request, observe
        )

    def execute_swap(
        self,
        signed_transaction: str,
        request_id: str,
        last_valid_block_height: int | None,
        observe: Observer | None = None,
    ) -> ExecuteResult:
        """Swap V2 ``POST /execute``, in its own rate bucket, with the order's
        ``lastValidBlockHeight`` passed back (a string, as the spec types it)."""
        extra = {}
        if last_valid_block_height is not None:
            extra["lastValidBlockHeight"] = str(last_valid_block_height)
        return self._execute(
            "execute_swap", self.paths.swap, signed_transaction, request_id, observe, extra
        )

    def positions(
        self,
        address: str,
        platforms: Sequence[str] | None = None,
        observe: Observer | None = None,
        spare: float | None = None,
    ) -> Portfolio:
        """`spare`: a background read (the runway watch) on spare capacity only."""
        op = "positions"
        params = {"platforms": ",".join(platforms)} if platforms else None
        path = f"{self.paths.portfolio}/positions/{quote(address, safe='')}"

        def parse(status: int, data: Any, response: httpx.Response) -> Portfolio:
            portfolio = model_parser(Portfolio)(status, data, response)
            return portfolio.model_copy(update={"raw": data})

        return self._call(op, "GET", path, params=params, parse=parse, observe=observe,
                          spare=spare)  # fmt: skip

    # --- background reads (the order follower): spare capacity only --------
    def recurring_orders(
        self,
        user: str,
        status: str,
        page: int,
        observe: Observer | None = None,
        mint: str | None = None,
    ) -> OrderPage:
        """One page of ``getRecurringOrders`` (time-based orders, no failed txs). The
        spec marks ``mint`` required and nullable: it is always sent, empty (null: every
        mint) unless `mint` filters the page."""
        params = {"user": user, "orderStatus": status, "recurringType": "time",
                  "page": str(page), "mint": mint or "", "includeFailedTx": "false"}  # fmt: skip
        path = f"{self.paths.recurring}/getRecurringOrders"
        return self._call("recurring_orders", "GET", path, params=params, observe=observe,
                          parse=listing_parser("time"), spare=SPARE_WAIT)  # fmt: skip

    def trigger_orders(
        self, user: str, status: str, page: int, observe: Observer | None = None
    ) -> OrderPage:
        """One page of ``getTriggerOrders`` (no failed txs)."""
        params = {"user": user, "orderStatus": status, "page": str(page),
                  "includeFailedTx": "false"}  # fmt: skip
        path = f"{self.paths.trigger}/getTriggerOrders"
        return self._call("trigger_orders", "GET", path, params=params, observe=observe,
                          parse=listing_parser("orders"), spare=SPARE_WAIT)  # fmt: skip

    def token_facts(
        self, mints: Sequence[str], observe: Observer | None = None
    ) -> list[TokenFacts]:
        """Tokens V2 ``/search`` for up to 100 mints (comma-separated)."""
        path = f"{self.paths.tokens}/search"
        return self._call("token_facts", "GET", path, params={"query": ",".join(mints[:100])},
                          parse=tokens_parser, observe=observe, spare=SPARE_WAIT)  # fmt: skip

    # --- the swap APIs' order and every execute -----------------------------
    def _order(
        self,
        op: str,
        prefix: str,
        model: type[Q],
        query: type[UltraOrderRequest | SwapV2OrderRequest],
        taker: str,
        request: Mapping[str, Any],
        observe: Observer | None,
    ) -> Q:
        """A swap API's ``GET /order``; `query` is that API's own request model, so a
        parameter its spec does not list is refused before anything is sent. Ultra: a
        missing transaction needs its ``errorCode``; Swap V2: a missing or empty one
        needs an ``errorCode`` or an ``error`` ("" is its "not built", null its "no
        taker", and we always send one), and a transaction needs its ``requestId``."""
        check_query(op, query, request)
        params = {k: query_value(v) for k, v in request.items() if v is not None}
        params["taker"] = taker

        def parse(status: int, data: Any, response: httpx.Response) -> Q:
            order = model_parser(model)(status, data, response)
            if isinstance(order, SwapOrder):
                if not order.transaction and not order.skipped:
                    raise classify.garbage(op, response, "no transaction and no errorCode")
                if order.transaction and not order.request_id:
                    raise classify.garbage(op, response, "a transaction without a requestId")
            elif order.transaction is None and order.error_code is None:
                raise classify.garbage(op, response, "no transaction and no errorCode")
            return order

        return self._call(op, "GET", f"{prefix}/order", params=params, parse=parse, observe=observe)

    def _execute(
        self,
        op: str,
        prefix: str,
        signed: str,
        request_id: str,
        observe: Observer | None,
        extra: Mapping[str, str] | None = None,
    ) -> ExecuteResult:
        # identical on every retry
        body = {"signedTransaction": signed, "requestId": request_id, **(extra or {})}
        model = model_parser(ExecuteResult)

        def parse(status: int, data: Any, response: httpx.Response) -> ExecuteResult:
            if isinstance(data, dict) and "raw" not in data:  # the answer itself as raw
                return model(status, {**data, "operation": op, "httpStatus": status,
                                      "raw": data}, response)  # fmt: skip
            wrapped = (
                {**data, "operation": op, "httpStatus": status} if isinstance(data, dict) else data
            )
            result = model(status, wrapped, response)
            return result.model_copy(update={"raw": data})

        return self._call(op, "POST", f"{prefix}/execute", json=body, parse=parse, observe=observe)
