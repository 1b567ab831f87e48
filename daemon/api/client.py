"""The Jupiter API client: typed calls over one `httpx.Client` (sync,
thread-safe), paced, with bounded retries where DESIGN §2 allows them.

Retry rules: the order-creating calls and the portfolio read are retried on
transport errors, 5xx, 429 and unreadable answers (nothing is signed yet);
execute calls are retried on the same errors *only by re-posting the
identical body* (same signed transaction and requestId), which cannot land
twice. 4xx, 401/403 and answered outcomes are never retried. Every HTTP
attempt is reported to the caller's observer as an `Attempt`.

The API key lives in a `SecretStr` and goes only into the ``x-api-key``
header; it is never logged, raised or shown in a repr.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import structlog
from pydantic import BaseModel, SecretStr, ValidationError

from daemon import __version__
from daemon.api import classify, jsonbody
from daemon.api.models import ExecuteResult, OrderResponse, Portfolio, UltraOrder
from daemon.api.orders import OrderPage, TokenFacts, parse_page, parse_tokens
from daemon.api.pacer import SPARE_SHARE, Pacer
from daemon.api.requests import RecurringCreateRequest, TriggerCancelRequest, UltraOrderRequest
from daemon.config import LEGACY_HOSTS, ApiPaths, Config
from daemon.errors import (
    ApiErrorInfo,
    ApiGarbageError,
    ApiRejectedError,
    JupcronError,
    NoSpareCapacityError,
    RateLimitedError,
    RetryableError,
)

log = structlog.get_logger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
KEYLESS_RATE = 0.5
KEYED_RATE = 1.0
BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0
SPARE_WAIT = 30.0  # seconds background calls wait for a spare slot before giving up


@dataclass(frozen=True)
class Attempt:
    """One HTTP attempt, for the run's event log."""

    operation: str
    number: int
    http_status: int | None
    error: str | None
    waited: float
    elapsed: float = 0.0  # seconds the HTTP exchange took


Observer = Callable[[Attempt], None]


def backoff(attempt: int) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based)."""
    return float(min(BACKOFF_BASE * 2 ** (attempt - 1), BACKOFF_CAP))


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


class _NoCookies(httpx.Cookies):
    """The Jupiter API keeps no session: no cookie is kept or sent (reading each
    response's Set-Cookie into a jar was a measurable part of a request's cost)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set_cookie_header(self, request: httpx.Request) -> None:
        return None


class _Http(httpx.Client):
    _no_cookies = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        return None  # nothing to keep


class JupiterClient:
    def __init__(
        self,
        base_url: str,
        *,
        api_key: SecretStr | None,
        paths: ApiPaths | None = None,
        connect_timeout: float = 5,
        read_timeout: float = 20,
        rate_limit: float | None = None,
        max_attempts: int = 4,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        spare_share: float = SPARE_SHARE,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.paths = paths or ApiPaths()
        self.max_attempts = max(1, max_attempts)
        self._key = api_key
        self._sleep, self._wall, self._clock = sleep, wall, clock
        rate = rate_limit or (KEYED_RATE if api_key is not None else KEYLESS_RATE)
        self.pacer = Pacer(rate, sleep=sleep, clock=clock, wall=wall, spare_share=spare_share)
        self._http = _Http(
            base_url=self.base_url,
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            transport=transport,
            headers={"accept": "application/json", "user-agent": f"jupcron/{__version__}"},
            follow_redirects=False,
        )
        # every request's headers, merged once (the client's defaults and the key)
        self._request_headers = {**self._http.headers, **self._headers()}
        if any(host in self.base_url for host in LEGACY_HOSTS):
            log.warning("api_legacy_host", base_url=self.base_url, use="https://api.jup.ag")

    @classmethod
    def from_config(
        cls,
        config: Config,
        api_key: SecretStr | None,
        transport: httpx.BaseTransport | None = None,
    ) -> JupiterClient:
        api = config.api
        return cls(
            api.base_url,
            api_key=api_key,
            paths=api.paths,
            connect_timeout=api.connect_timeout,
            read_timeout=api.read_timeout,
            rate_limit=api.rate_limit,
            max_attempts=api.max_attempts,
            transport=transport,
            spare_share=config.follow.share,
        )

    def __repr__(self) -> str:
        key = "***" if self._key is not None else None
        return f"JupiterClient(base_url={self.base_url!r}, api_key={key!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> JupiterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- operations --------------------------------------------------------
    def create_recurring_order(
        self, user: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> OrderResponse:
        op = "create_recurring_order"
        checked = self._check(op, RecurringCreateRequest, request)
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
            op, "POST", path, json=body, parse=self._model(OrderResponse), observe=observe
        )

    def execute_recurring(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult:
        return self._execute(
            "execute_recurring", self.paths.recurring, signed_transaction, request_id, observe
        )

    def cancel_trigger_order(
        self, maker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> OrderResponse:
        op = "cancel_trigger_order"
        checked = self._check(op, TriggerCancelRequest, request)
        # the API takes a string: an integer from the plan goes out as its digits
        body = {**request, "computeUnitPrice": checked.wire_compute_unit_price, "maker": maker}
        path = f"{self.paths.trigger}/cancelOrder"
        return self._call(
            op, "POST", path, json=body, parse=self._model(OrderResponse), observe=observe
        )

    def execute_trigger(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult:
        return self._execute(
            "execute_trigger", self.paths.trigger, signed_transaction, request_id, observe
        )

    def ultra_order(
        self, taker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> UltraOrder:
        op = "ultra_order"
        self._check(op, UltraOrderRequest, request)
        params = {k: _query_value(v) for k, v in request.items() if v is not None}
        params["taker"] = taker

        def parse(status: int, data: Any, response: httpx.Response) -> UltraOrder:
            order = self._model(UltraOrder)(status, data, response)
            if order.transaction is None and order.error_code is None:
                raise classify.garbage(op, response, "no transaction and no errorCode")
            return order

        return self._call(
            op, "GET", f"{self.paths.ultra}/order", params=params, parse=parse, observe=observe
        )

    def quote(
        self, input_mint: str, output_mint: str, amount: int, observe: Observer | None = None
    ) -> UltraOrder:
        """GET /ultra/v1/order without a taker: what `amount` would buy now (a price;
        no transaction is built)."""
        params = {"inputMint": input_mint, "outputMint": output_mint, "amount": str(amount)}
        path = f"{self.paths.ultra}/order"
        parse = self._model(UltraOrder)
        return self._call("quote", "GET", path, params=params, parse=parse, observe=observe)

    def execute_ultra(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult:
        return self._execute(
            "execute_ultra", self.paths.ultra, signed_transaction, request_id, observe
        )

    def positions(
        self,
        address: str,
        platforms: Sequence[str] | None = None,
        observe: Observer | None = None,
    ) -> Portfolio:
        op = "positions"
        params = {"platforms": ",".join(platforms)} if platforms else None
        path = f"{self.paths.portfolio}/positions/{quote(address, safe='')}"

        def parse(status: int, data: Any, response: httpx.Response) -> Portfolio:
            portfolio = self._model(Portfolio)(status, data, response)
            return portfolio.model_copy(update={"raw": data})

        return self._call(op, "GET", path, params=params, parse=parse, observe=observe)

    # --- background reads (the order follower): spare capacity only --------
    def recurring_orders(
        self, user: str, status: str, page: int, observe: Observer | None = None
    ) -> OrderPage:
        """One page of ``getRecurringOrders`` (time-based orders, no failed txs)."""
        params = {"user": user, "orderStatus": status, "recurringType": "time",
                  "page": str(page), "includeFailedTx": "false"}  # fmt: skip
        path = f"{self.paths.recurring}/getRecurringOrders"
        return self._call("recurring_orders", "GET", path, params=params, observe=observe,
                          parse=self._listing("time"), spare=SPARE_WAIT)  # fmt: skip

    def trigger_orders(
        self, user: str, status: str, page: int, observe: Observer | None = None
    ) -> OrderPage:
        """One page of ``getTriggerOrders`` (no failed txs)."""
        params = {"user": user, "orderStatus": status, "page": str(page),
                  "includeFailedTx": "false"}  # fmt: skip
        path = f"{self.paths.trigger}/getTriggerOrders"
        return self._call("trigger_orders", "GET", path, params=params, observe=observe,
                          parse=self._listing("orders"), spare=SPARE_WAIT)  # fmt: skip

    def token_facts(
        self, mints: Sequence[str], observe: Observer | None = None
    ) -> list[TokenFacts]:
        """Tokens V2 ``/search`` for up to 100 mints (comma-separated)."""

        def parse(status: int, data: Any, response: httpx.Response) -> list[TokenFacts]:
            try:
                return parse_tokens(data)
            except ValueError as exc:
                raise classify.garbage("", response, str(exc)) from None

        path = f"{self.paths.tokens}/search"
        return self._call("token_facts", "GET", path, params={"query": ",".join(mints[:100])},
                          parse=parse, observe=observe, spare=SPARE_WAIT)  # fmt: skip

    @staticmethod
    def _listing(array: str) -> Callable[[int, Any, httpx.Response], OrderPage]:
        def parse(status: int, data: Any, response: httpx.Response) -> OrderPage:
            try:
                return parse_page(data, array)
            except ValueError as exc:
                raise classify.garbage("", response, str(exc)) from None

        return parse

    # --- machinery ---------------------------------------------------------
    @staticmethod
    def _check(operation: str, model: type[Any], request: Mapping[str, Any]) -> Any:
        try:
            return model.model_validate(dict(request))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "request"
            info = ApiErrorInfo(operation=operation, error=f"{where}: {first['msg']}")
            raise ApiRejectedError(f"{operation}: invalid request: {info.error}", info) from None

    @staticmethod
    def _model(model: type[M]) -> Callable[[int, Any, httpx.Response], M]:
        def parse(status: int, data: Any, response: httpx.Response) -> M:
            if not isinstance(data, dict):
                raise classify.garbage("", response, "not a JSON object")
            try:
                return model.model_validate(data)
            except ValidationError as exc:
                fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()[:3])
                raise classify.garbage("", response, f"unexpected fields: {fields}") from None

        return parse

    def _execute(
        self, op: str, prefix: str, signed: str, request_id: str, observe: Observer | None
    ) -> ExecuteResult:
        body = {"signedTransaction": signed, "requestId": request_id}  # identical on every retry
        model = self._model(ExecuteResult)

        def parse(status: int, data: Any, response: httpx.Response) -> ExecuteResult:
            wrapped = (
                {**data, "operation": op, "httpStatus": status} if isinstance(data, dict) else data
            )
            result = model(status, wrapped, response)
            return result.model_copy(update={"raw": data})

        return self._call(op, "POST", f"{prefix}/execute", json=body, parse=parse, observe=observe)

    def _headers(self) -> dict[str, str]:
        if self._key is None:
            return {}
        return {"x-api-key": self._key.get_secret_value()}

    def _request(
        self, method: str, path: str, content: bytes | None, params: Mapping[str, str] | None
    ) -> httpx.Request:
        """The request, built directly: one URL parse (not three, as merging with the
        client's base URL takes) and the headers merged once at start. `content`: a
        JSON body already encoded (`jsonbody`)."""
        url = self.base_url + path
        if params:
            url += "?" + str(httpx.QueryParams(params))
        if content is None:
            return httpx.Request(method, url, headers=self._request_headers)
        headers = {**self._request_headers, "content-type": "application/json"}
        return httpx.Request(method, url, content=content, headers=headers)

    def _call(
        self,
        operation: str,
        method: str,
        path: str,
        *,
        parse: Callable[[int, Any, httpx.Response], T],
        observe: Observer | None,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        spare: float | None = None,
    ) -> T:
        """`spare`: a background call, taking only spare slots (waiting that long)."""
        pending = 0.0  # backoff owed before the next attempt
        # encoded once (Decimals as exact JSON numbers): a retry posts the identical bytes
        content = None if json is None else jsonbody.encode(json)
        for number in range(1, self.max_attempts + 1):
            if pending > 0:
                self._sleep(pending)
            waited = pending + self._slot(operation, spare)
            status: int | None = None
            error: JupcronError | None = None
            result: T | None = None
            started = self._clock()
            try:
                response = self._http.send(self._request(method, path, content, params))
            except httpx.HTTPError as exc:
                error = classify.transport_error(operation, exc)
            else:
                status = response.status_code
                self.pacer.observe(response.headers)
                data, error = classify.classify(operation, response, self._wall())
                if error is None:
                    try:
                        result = parse(status, data, response)
                    except ApiGarbageError as exc:
                        exc.info.operation = operation
                        error = exc
            if observe is not None:
                text = None if error is None else f"{type(error).__name__}: {error}"
                elapsed = round(self._clock() - started, 6)
                observe(Attempt(operation, number, status, text, round(waited, 3), elapsed))
            if error is None:
                log.debug("api_call", operation=operation, attempt=number, http_status=status)
                return result  # type: ignore[return-value]
            retry = isinstance(error, RetryableError) and number < self.max_attempts
            log.warning(
                "api_attempt_failed",
                operation=operation,
                attempt=number,
                http_status=status,
                error=type(error).__name__,
                retry=retry,
            )
            if not retry:
                raise error
            pending = backoff(number)
            if isinstance(error, RateLimitedError):
                self.pacer.block_for(
                    error.retry_after if error.retry_after is not None else pending
                )
                pending = 0.0
        raise AssertionError("unreachable")  # pragma: no cover

    def _slot(self, operation: str, spare: float | None) -> float:
        if spare is None:
            return self.pacer.acquire()
        waited = self.pacer.acquire_spare(spare)
        if waited is None:
            raise NoSpareCapacityError(f"{operation}: no spare request capacity (runs first)")
        return waited
