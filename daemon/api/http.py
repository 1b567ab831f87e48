"""The HTTP layer under `jupcron.api.client.JupiterClient`: an `httpx.Client`
that keeps no cookies (the Jupiter API has no session) and sends without the
layers the API never needs, its requests built directly, the record of one HTTP
attempt for the caller's observer, and the backoff between attempts."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import httpx

BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0


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


class _NoCookies(httpx.Cookies):
    """The Jupiter API keeps no session: no cookie is kept or sent (reading each
    response's Set-Cookie into a jar was a measurable part of a request's cost)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set_cookie_header(self, request: httpx.Request) -> None:
        return None


def _curl() -> Callable[[], httpx.BaseTransport]:
    """What makes a thread's libcurl transport. pycurl is loaded here, when a client
    that will use it is made (20 ms: not in a first run's way, and not paid by a
    command that makes no client)."""
    from jupcron.api.curl import CurlTransport

    return CurlTransport


# `httpx.Client` arguments that shape the transport it makes
_TRANSPORT_SETTINGS = frozenset({"verify", "cert", "trust_env", "http1", "http2", "limits"})


class SessionlessClient(httpx.Client):
    """An `httpx.Client` with no cookie jar, and, when it makes its own transport,
    one connection pool per thread.

    A pool per thread has the thread's one connection (as a client per thread
    would): a libcurl handle (`jupcron.api.curl.CurlTransport`, httpx's default
    settings: TLS verified against the same CA bundle, no proxy), which reads and
    parses the answer without holding the GIL; httpx's own transport parsed it in
    Python, a quarter of a run's CPU. A proxy from the environment, a transport given
    to the client, and the transport of a client given TLS or pool settings stay
    httpx's, shared. A pool whose thread has ended is closed when the next one is
    made, every pool when the client closes."""

    _no_cookies = _NoCookies()

    def __init__(self, *, transport: httpx.BaseTransport | None = None, **kwargs: Any) -> None:
        # pools of httpx's default settings only (a client given TLS or pool settings
        # keeps the one transport httpx made of them)
        per_thread = transport is None and not _TRANSPORT_SETTINGS.intersection(kwargs)
        self._new_pool = _curl() if per_thread else None
        super().__init__(transport=transport, **kwargs)
        self._pools: dict[threading.Thread, httpx.BaseTransport] = {}
        self._pools_lock = threading.Lock()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        return None  # nothing to keep

    def _pool(self, url: httpx.URL) -> httpx.BaseTransport:
        chosen = self._transport_for_url(url)
        if chosen is not self._transport or self._new_pool is None:
            return chosen  # a proxy's, or the one transport a caller gave
        me = threading.current_thread()
        pool = self._pools.get(me)
        if pool is None:
            with self._pools_lock:
                for gone in [t for t in self._pools if not t.is_alive()]:
                    self._pools.pop(gone).close()
                pool = self._pools[me] = self._new_pool()
        return pool

    def close(self) -> None:
        super().close()
        with self._pools_lock:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()

    def exchange(self, request: httpx.Request) -> httpx.Response:
        """`send`, without the layers the API never needs: the request goes straight
        to the transport `send` would pick (proxies from the environment included),
        with the client's timeout, and the answer is read whole and closed, as `send`
        does. No auth flow, redirects (this client follows none), hooks or cookies:
        they were a fifth of a request's CPU."""
        if self.is_closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        if "timeout" not in request.extensions:
            request.extensions["timeout"] = self.timeout.as_dict()
        try:
            response = self._pool(request.url).handle_request(request)
            response.request = request
            response.default_encoding = self._default_encoding
            try:
                response.read()
            finally:
                response.close()
        except httpx.RequestError as exc:  # as `send` tells it: with its request
            exc.request = request
            raise
        return response


class RequestBuilder:
    """Requests to `base_url` with `headers`, built directly: the client's headers
    merged once, at its start (as `httpx.Headers`, for a JSON body and without one),
    and each URL parsed once (the last `URLS` distinct ones are kept: a plan's calls
    repeat theirs), not three times as merging with the client's base URL takes.

    The headers httpx would add to each request are added here as it adds them:
    ``Host`` first (kept per host, with the builder's headers after it) and a body's
    ``Content-Length`` last; the request is then made from them and its body, without
    httpx's generic preparation (the same headers, in the same order, on the wire)."""

    def __init__(self, base_url: str, headers: Mapping[str, str]) -> None:
        self.base_url = base_url
        self._headers = dict(headers)
        self._json_headers = {**headers, "content-type": "application/json"}
        self._plain: httpx.Headers | dict[str, str] = self._headers
        self._json: httpx.Headers | dict[str, str] = self._json_headers
        # httpx refuses a value it cannot encode: then at each request, as it always did
        with contextlib.suppress(UnicodeEncodeError):
            self._plain, self._json = httpx.Headers(headers), httpx.Headers(self._json_headers)
        # the headers as sent, by (Host, a JSON body): httpx's own additions made here
        self._direct = isinstance(self._json, httpx.Headers) and not any(
            name in self._json for name in _ADDED
        )
        self._hosted: dict[tuple[bytes, bool], httpx.Headers] = {}

    def __call__(
        self,
        method: str,
        path: str,
        content: bytes | None,
        params: Mapping[str, str] | None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Request:
        """`content`: a JSON body already encoded (`jupcron.api.jsonbody`); `headers`:
        sent besides the builder's (Trigger V2's ``Authorization``)."""
        url = _url(self.base_url, path, tuple(params.items()) if params else ())
        if headers:
            extra = {**self._headers, **headers}
            if content is not None:
                extra["content-type"] = "application/json"
            return httpx.Request(method, url, content=content, headers=extra)
        base = self._plain if content is None else self._json
        host = url.netloc if url.host else b""
        empty_post = content is None and method.upper() in _BODY_METHODS  # Content-Length: 0
        if not (host and self._direct and isinstance(base, httpx.Headers)) or empty_post:
            return httpx.Request(method, url, content=content, headers=base)
        key = (host, content is not None)
        sent = self._hosted.get(key)
        if sent is None:  # httpx puts the Host it adds first
            sent = self._hosted[key] = httpx.Headers([(b"Host", host), *base.raw])
        body = b"" if content is None else content
        request = httpx.Request(method, url, headers=sent, stream=httpx.ByteStream(body))
        if content is not None:  # and a body's length last
            request.headers["Content-Length"] = str(len(content))
        request.read()  # the body in memory, as a request built from content= has it
        return request


# httpx gives these a ``Content-Length: 0`` without a body: then built its way
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# headers that would change what httpx adds: with one of them, requests are built its way
_ADDED = ("host", "content-length", "transfer-encoding")
URLS = 4096


@lru_cache(maxsize=URLS)
def _url(base_url: str, path: str, params: tuple[tuple[str, str], ...]) -> httpx.URL:
    url = base_url + path
    if params:
        url += "?" + str(httpx.QueryParams(params))
    return httpx.URL(url)
