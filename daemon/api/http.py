"""The HTTP layer under `jupcron.api.client.JupiterClient`: an `httpx.Client`
that keeps no cookies (the Jupiter API has no session), the record of one HTTP
attempt for the caller's observer, and the backoff between attempts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
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


class SessionlessClient(httpx.Client):
    _no_cookies = _NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        return None  # nothing to keep


def build_request(
    base_url: str,
    headers: Mapping[str, str],
    method: str,
    path: str,
    content: bytes | None,
    params: Mapping[str, str] | None,
) -> httpx.Request:
    """The request, built directly: one URL parse (not three, as merging with the
    client's base URL takes) and the client's headers merged once, at its start.
    `content`: a JSON body already encoded (`jupcron.api.jsonbody`)."""
    url = base_url + path
    if params:
        url += "?" + str(httpx.QueryParams(params))
    if content is None:
        return httpx.Request(method, url, headers=headers)
    return httpx.Request(
        method, url, content=content, headers={**headers, "content-type": "application/json"}
    )
