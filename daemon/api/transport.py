"""The Jupiter API's transport under `jupcron.api.client.JupiterClient`: one
`httpx.Client` (sync, thread-safe), the rate buckets that pace every call, and the
bounded retries DESIGN §2 allows.

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
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Self, TypeVar

import httpx
import structlog
from pydantic import SecretStr

from jupcron import __version__
from jupcron.api import classify, jsonbody
from jupcron.api.http import Attempt, Observer, RequestBuilder, SessionlessClient, backoff
from jupcron.api.pacer import HEADROOM, SPARE_SHARE, Buckets, Budget, Pacer, server_now
from jupcron.config import LEGACY_HOSTS, ApiPaths
from jupcron.errors import (
    ApiGarbageError,
    JupcronError,
    NoSpareCapacityError,
    RateLimitedError,
    RetryableError,
)

log = structlog.get_logger("jupcron.api.client")  # its lines keep the client's logger name

T = TypeVar("T")
KEYLESS_RATE = 0.5
KEYED_RATE = 1.0
# Swap V2 execute's own bucket (docs/products.md): keyless 20, Free 50, paid 100 requests/s
KEYLESS_EXECUTE_RATE = 20.0
KEYED_EXECUTE_RATE = 50.0


class ApiTransport:
    """Paced, retried calls to the API at `base_url` (each product under its prefix in
    `paths`); `JupiterClient` adds the operations."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: SecretStr | None,
        paths: ApiPaths | None = None,
        connect_timeout: float = 5,
        read_timeout: float = 20,
        rate_limit: float | None = None,
        execute_rate_limit: float | None = None,
        max_attempts: int = 4,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        spare_share: float = SPARE_SHARE,
        budget_for: Callable[[str, float], Budget] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.paths = paths or ApiPaths()
        self.max_attempts = max(1, max_attempts)
        self._key = api_key
        self._sleep, self._wall, self._clock = sleep, wall, clock
        rate = rate_limit or (KEYED_RATE if api_key is not None else KEYLESS_RATE)
        # several daemons on one PostgreSQL: the key's budget is shared through it
        budget = budget_for("main", rate * HEADROOM) if budget_for is not None else None
        self.pacer = Pacer(rate, sleep=sleep, clock=clock, wall=wall, spare_share=spare_share,
                           budget=budget)  # fmt: skip
        keyed = KEYED_EXECUTE_RATE if api_key is not None else KEYLESS_EXECUTE_RATE
        execute_rate = execute_rate_limit or keyed
        # execute's bucket is the key's too: shared as the main one (N daemons, one limit)
        execute_budget = (
            budget_for("execute_swap", execute_rate * HEADROOM) if budget_for is not None else None
        )
        execute_pacer = Pacer(execute_rate, sleep=sleep, clock=clock, wall=wall,
                              budget=execute_budget)  # fmt: skip
        self.buckets = Buckets(self.pacer, {"execute_swap": execute_pacer})
        self._http = SessionlessClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            transport=transport,
            headers={"accept": "application/json", "user-agent": f"jupcron/{__version__}"},
            follow_redirects=False,
        )
        # every request's headers, merged once (the client's defaults and the key)
        self._request = RequestBuilder(self.base_url, {**self._http.headers, **self._headers()})
        if any(host in self.base_url for host in LEGACY_HOSTS):
            log.warning("api_legacy_host", base_url=self.base_url, use="https://api.jup.ag")

    def __repr__(self) -> str:
        key = "***" if self._key is not None else None
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key={key!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _headers(self) -> dict[str, str]:
        if self._key is None:
            return {}
        return {"x-api-key": self._key.get_secret_value()}

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
        headers: Mapping[str, str] | None = None,
    ) -> T:
        """`spare`: a background call, taking only spare slots (waiting that long);
        `headers`: sent besides the API key (Trigger V2's ``Authorization``)."""
        pending = 0.0  # backoff owed before the next attempt
        # encoded once (Decimals as exact JSON numbers): a retry posts the identical bytes
        content = None if json is None else jsonbody.encode(json)
        pacer = self.buckets.for_operation(operation)  # the rate bucket that serves it
        request = partial(self._request, method, path, content, params, headers)
        for number in range(1, self.max_attempts + 1):
            if pending > 0:
                self._sleep(pending)
            waited = pending + self._slot(operation, spare)
            status: int | None = None
            error: JupcronError | None = None
            result: T | None = None
            started = self._clock()
            try:
                response = self._http.exchange(request())
            except httpx.HTTPError as exc:
                error = classify.transport_error(operation, exc)
            else:
                status = response.status_code
                pacer.observe(response.headers)
                # a 429's reset is on the API's clock: read against it, not ours
                now = server_now(response.headers, self._wall())
                data, error = classify.classify(operation, response, now)
                if error is None:
                    try:
                        result = parse(status, data, response)
                    except ApiGarbageError as exc:
                        if not exc.info.operation:  # raised by a parser: named here
                            exc.info.operation = operation
                            exc.message = classify.named(operation, exc.message)
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
                pacer.block_for(error.retry_after if error.retry_after is not None else pending)
                pending = 0.0
        raise AssertionError("unreachable")  # pragma: no cover

    def _slot(self, operation: str, spare: float | None) -> float:
        if spare is None:
            return self.buckets.for_operation(operation).acquire()
        waited = self.pacer.acquire_spare(spare)
        if waited is None:
            raise NoSpareCapacityError(f"{operation}: no spare request capacity (runs first)")
        return waited
