"""The emulator's request handler: pure (no sockets), thread-safe, time via a
clock seam. `Emulator.handle` maps one HTTP request to an `EmuResponse`; the
in-process transport and the uvicorn server are thin shells around it.

Order of checks, like the real gateway: route → API key → rate limit →
injected transport faults → the product handler → answer faults.

Rate buckets, as the docs describe them: every API call counts against one
sliding window (`rate_limit`), except Swap V2's execute, which has a window of
its own (`execute_rate_limit`; by default 20 requests/s keyless, 50 with a key,
the Free tier's figures); each answer's ``x-ratelimit-*`` headers are its own
bucket's. Ultra v1 (``/ultra/v1``) and Swap V2 (``/swap/v2``) are separate
operations: an order taken by one is unknown to the other's execute.
"""

from __future__ import annotations

import hmac
import json
import random
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jupcron.emulator import control, execute, keeper, listings, orders, swaps, trigger_v2
from jupcron.emulator import trigger_v2_cancel as trigger_v2_keeper
from jupcron.emulator.common import EmuResponse, State, json_response, text_response
from jupcron.emulator.faults import Fault, FaultKind, Faults, request_fields
from jupcron.emulator.ledger import Ledger
from jupcron.emulator.ratelimit import SlidingWindow

# path prefix of each product -> the names it is served under
PREFIXES: dict[str, tuple[str, ...]] = {
    "recurring": ("/recurring/v1",),
    "trigger": ("/trigger/v1",),
    "ultra": ("/ultra/v1",),
    "swap": ("/swap/v2",),
    "portfolio": ("/portfolio/v1",),
    "tokens": ("/tokens/v2",),
    "trigger_v2": ("/trigger/v2",),
}
ROUTES: dict[tuple[str, str, str], str] = {
    ("POST", "recurring", "/createOrder"): "create_recurring_order",
    ("POST", "recurring", "/execute"): "execute_recurring",
    ("POST", "trigger", "/cancelOrder"): "cancel_trigger_order",
    ("POST", "trigger", "/execute"): "execute_trigger",
    ("GET", "ultra", "/order"): "ultra_order",
    ("POST", "ultra", "/execute"): "execute_ultra",
    ("GET", "swap", "/order"): "swap_order",
    ("POST", "swap", "/execute"): "execute_swap",
    ("GET", "recurring", "/getRecurringOrders"): "recurring_orders",
    ("GET", "trigger", "/getTriggerOrders"): "trigger_orders",
    ("GET", "tokens", "/search"): "token_facts",
}
TRANSPORT_FAULTS = (
    FaultKind.RATE_LIMIT,
    FaultKind.SERVER_ERROR,
    FaultKind.SLOW,
    FaultKind.DROP,
    FaultKind.MALFORMED,
    FaultKind.FORBIDDEN,
    FaultKind.ORDER_ERROR,
    FaultKind.NOT_READY,
)
# Swap V2 execute's own bucket when none is given (the docs' keyless and Free figures)
KEYLESS_EXECUTE_RATE = 20.0
KEYED_EXECUTE_RATE = 50.0
# fields corrupted by the wrong_types fault
WRONG_TYPES: dict[str, Any] = {
    "requestId": 12345,
    "transaction": True,
    "status": 7,
    "signature": ["not", "a", "string"],
    "inAmount": {"amount": 1},
    "outAmount": [1],
    "elements": "none",
    "order": 99,
    "time": "none",
    "orders": 7,
    "totalPages": [2],
    "lastValidBlockHeight": [1],
}


def route(method: str, path: str) -> tuple[str, str] | None:
    """(operation, path tail) for an API path, or None."""
    for product, prefixes in PREFIXES.items():
        for prefix in prefixes:
            if not path.startswith(prefix + "/"):
                continue
            tail = path[len(prefix) :]
            if product == "portfolio" and method == "GET" and tail.startswith("/positions/"):
                return "positions", tail.removeprefix("/positions/")
            if product == "trigger_v2":
                found = trigger_v2.route(method, tail)
                return None if found is None else (found, tail)
            operation = ROUTES.get((method, product, tail))
            if operation:
                return operation, tail
    return None


class Emulator:
    """A stand-in for Jupiter's HTTP API, keeping a ledger and injecting faults."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        rate_limit: float | None = None,
        execute_rate_limit: float | None = None,
        seed: int = 0,
        blockhash_ttl: float = 90.0,
        request_ttl: float = 120.0,
        clock: Callable[[], float] = time.time,
        rate_window: float = 60.0,
        faults: Iterable[Mapping[str, Any]] = (),
        default_balances: Mapping[str, int] | None = None,
        keeper_speed: float = 1.0,
        jwt_ttl: float | None = None,
    ) -> None:
        self._api_key = api_key
        self.limiter = SlidingWindow(rate_limit, rate_window) if rate_limit else None
        if rate_limit and not execute_rate_limit:
            execute_rate_limit = KEYED_EXECUTE_RATE if api_key else KEYLESS_EXECUTE_RATE
        self.execute_limiter = (
            SlidingWindow(execute_rate_limit, rate_window) if execute_rate_limit else None
        )
        self.ledger = Ledger(default_balances)
        self.faults = Faults(seed)
        self.faults.extend(faults)
        self.state = State(
            ledger=self.ledger,
            faults=self.faults,
            rng=random.Random(seed),
            clock=clock,
            blockhash_ttl=blockhash_ttl,
            request_ttl=request_ttl,
            keeper_speed=keeper_speed,
            genesis=clock(),
        )
        if jwt_ttl is not None:
            self.state.v2.jwt_ttl = jwt_ttl  # Trigger V2's JWT lifetime (24 h by default)

    def __repr__(self) -> str:
        key = "***" if self._api_key else None
        return f"Emulator(api_key={key!r}, limiter={self.limiter is not None})"

    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> EmuResponse:
        method = method.upper()
        with self.state.lock:
            keeper.catch_up(self.state)  # the keepers' work up to now, before any answer
            trigger_v2_keeper.catch_up(self.state)
            if path.startswith("/_emulator/"):
                return control.control(self.state, method, path, body)
            found = ("rpc", "") if (method, path) == ("POST", "/rpc") else route(method, path)
            if found is None:
                return json_response(404, {"error": "Not Found"})
            operation, tail = found
            self.ledger.count(operation)
            lowered = {k.lower(): v for k, v in headers.items()}
            if operation != "rpc" and self._api_key is not None:
                given = lowered.get("x-api-key", "")
                if not hmac.compare_digest(given.encode(), self._api_key.encode()):
                    return json_response(401, {"code": 401, "message": "Invalid API key"})
            limit_headers: dict[str, str] = {}
            limiter = self.execute_limiter if operation == "execute_swap" else self.limiter
            if limiter is not None and operation != "rpc":
                allowed, limit_headers = limiter.hit(self.state.clock())
                if not allowed:
                    answer = text_response(429, "[API Gateway] Too many requests")
                    answer.headers.update(limit_headers)
                    return answer
            fields = request_fields(query, body)
            fault = self.faults.take(operation, kinds=TRANSPORT_FAULTS, request=fields)
            delay = 0.0
            if fault is not None and fault.kind == FaultKind.SLOW:
                delay = float(fault.params.get("seconds", 2.0))
            elif fault is not None:
                return self._transport_fault(fault)
            if operation.startswith("trigger_v2_"):
                answer = self._trigger_v2(operation, tail, query, lowered, body, fields)
            else:
                answer = self._dispatch(operation, tail, query, body, fields)
            answer.delay = delay
            if 200 <= answer.status < 300 or answer.status == 429:
                answer.headers.update(limit_headers)
            return self._answer_faults(operation, answer, fields)

    def _dispatch(
        self,
        operation: str,
        tail: str,
        query: Mapping[str, str],
        body: bytes,
        fields: Mapping[str, str] | None = None,
    ) -> EmuResponse:
        state = self.state
        if operation == "rpc":
            return control.rpc(state, body)
        if operation == "positions":
            return orders.positions(state, tail, query)
        if operation == "recurring_orders":
            return listings.recurring_orders(state, query)
        if operation == "trigger_orders":
            return listings.trigger_orders(state, query)
        if operation == "token_facts":
            return listings.token_search(state, query)
        if operation.startswith("execute_"):
            return execute.execute(state, operation, body)
        kinds: tuple[FaultKind, ...] = (FaultKind.HOSTILE, FaultKind.HIDDEN_DRAIN)
        if operation in ("swap_order", "ultra_order"):
            kinds += (FaultKind.LOW_QUOTE,)
        hostile = self.faults.take(operation, kinds=kinds, request=fields)
        if operation == "create_recurring_order":
            return orders.create_recurring(state, body, hostile)
        if operation == "cancel_trigger_order":
            return orders.cancel_trigger(state, body, hostile)
        if operation == "swap_order":
            return swaps.swap_order(state, query, hostile)
        return swaps.ultra_order(state, query, hostile)

    def _trigger_v2(
        self,
        operation: str,
        tail: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
        fields: Mapping[str, str],
    ) -> EmuResponse:
        hostile = self.faults.take(operation, kinds=(FaultKind.HOSTILE,), request=fields)
        revoked = self.faults.take(operation, kinds=(FaultKind.JWT_EXPIRED,), request=fields)
        return trigger_v2.dispatch(
            self.state, operation, tail, query, headers, body, hostile, revoked is not None
        )

    @staticmethod
    def _transport_fault(fault: Fault) -> EmuResponse:
        if fault.kind == FaultKind.RATE_LIMIT:
            answer = text_response(429, "Too many requests")
            answer.headers["retry-after"] = str(fault.params.get("retry_after", 1))
            return answer
        if fault.kind == FaultKind.SERVER_ERROR:
            status = int(fault.params.get("status", 500))
            return json_response(status, {"error": "Internal Server Error", "code": status})
        if fault.kind == FaultKind.FORBIDDEN:
            message = "API key does not have access to this endpoint"
            return json_response(403, {"code": 403, "message": message})
        if fault.kind == FaultKind.ORDER_ERROR:
            error = str(fault.params.get("error", "Failed to get quotes"))
            return json_response(200, {"requestId": str(uuid.uuid4()), "error": error})
        if fault.kind == FaultKind.NOT_READY:
            message = "Order is not yet marked ready to cancel. Retry shortly"
            return json_response(400, {"error": message})
        if fault.kind == FaultKind.MALFORMED:
            return EmuResponse(
                200, b'{"requestId": "abc", "transac', {"content-type": "application/json"}
            )
        return EmuResponse(drop=True)  # DROP

    def _answer_faults(
        self, operation: str, answer: EmuResponse, fields: Mapping[str, str] | None = None
    ) -> EmuResponse:
        kinds = (FaultKind.WRONG_TYPES, FaultKind.LOST_ANSWER, FaultKind.DROP_FIELD,
                 FaultKind.BAD_PAGE)  # fmt: skip
        fault = self.faults.take(operation, kinds=kinds, request=fields)
        if fault is None:
            return answer
        if fault.kind == FaultKind.LOST_ANSWER:
            answer.drop = True
            return answer
        try:
            data = json.loads(answer.body)
        except ValueError:
            return answer
        if fault.kind == FaultKind.DROP_FIELD:
            data = _without(data, str(fault.params.get("field", "")))
        elif fault.kind == FaultKind.BAD_PAGE and isinstance(data, dict):
            data["page"] = int(data.get("page") or 1) + 1
        elif isinstance(data, dict):
            for key in list(data):
                if key in WRONG_TYPES:
                    data[key] = WRONG_TYPES[key]
        answer.body = json.dumps(data).encode()
        return answer


def _without(data: Any, field: str) -> Any:
    """`data` with every `field` key removed, at any depth."""
    if isinstance(data, dict):
        return {k: _without(v, field) for k, v in data.items() if k != field}
    if isinstance(data, list):
        return [_without(v, field) for v in data]
    return data
