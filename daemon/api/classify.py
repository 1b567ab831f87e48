"""Turns an HTTP answer (or an httpx exception) into our error tree, keeping
the HTTP status, the API's code, error/cause text and the trimmed raw body."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import ValidationError

from jupcron.api.models import SWAP_EXECUTES, ErrorEnvelope
from jupcron.errors import (
    ApiAuthError,
    ApiErrorInfo,
    ApiGarbageError,
    ApiRejectedError,
    ApiRetryLaterError,
    ApiServerError,
    ApiTransportError,
    JupcronError,
    RateLimitedError,
)
from jupcron.logs import MASK, is_secret_key

BODY_LIMIT = 2000
EXECUTES = frozenset({"execute_recurring", "execute_trigger", *SWAP_EXECUTES})
# 4xx answers the API documents as temporary, by operation: the words of its error text
# (trigger/errors.mdx: a price order's cancel "is not yet marked ready to cancel. Retry
# shortly"); retried like a 5xx (bounded, each attempt recorded), nothing being signed yet
RETRY_LATER: dict[str, tuple[str, ...]] = {
    "trigger_v2_cancel": ("not yet marked ready to cancel", "retry shortly"),
}


def retry_later(operation: str, status: int, text: str | None) -> bool:
    """Whether this 4xx is one the API says to retry shortly."""
    words = RETRY_LATER.get(operation)
    lowered = (text or "").lower()
    return status == 400 and words is not None and any(w in lowered for w in words)


def sent_secrets(response: httpx.Response) -> tuple[str, ...]:
    """The secret values the request of `response` carried in its headers (the
    ``x-api-key``, an ``Authorization``'s credentials), longest first; none when the
    answer was made without its request."""
    try:
        headers = response.request.headers
    except RuntimeError:  # httpx: no request set on this response
        return ()
    found: set[str] = set()
    for name, value in headers.items():
        if not is_secret_key(name) or not value.strip():
            continue
        found.add(value.strip())
        if name.lower() == "authorization":  # "Bearer <jwt>": the credentials alone too
            credentials = value.strip().partition(" ")[2].strip()
            if credentials:
                found.add(credentials)
    return tuple(sorted(found, key=len, reverse=True))


def scrubbed(text: str | None, secrets: tuple[str, ...]) -> str | None:
    """`text` with each of `secrets` replaced by ``'***'``."""
    if text is None:
        return None
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


def info_for(operation: str, response: httpx.Response | None, data: Any = None) -> ApiErrorInfo:
    """What an answer told us, as the run row keeps it. An answer that quotes our
    request (a proxy's or a framework's error page, an error text echoing its
    headers) would carry our API key back: every text taken from it is scrubbed of
    the secret values the request sent (`sent_secrets`), before any message, log
    line or stored column is made of it."""
    info = ApiErrorInfo(operation=operation)
    if response is None:
        return info
    secrets = sent_secrets(response)
    info.http_status = response.status_code
    info.body = scrubbed(response.text[:BODY_LIMIT], secrets)
    if isinstance(data, dict):
        try:
            envelope = ErrorEnvelope.model_validate(data)
        except ValidationError:
            return info
        info.code = envelope.code
        info.error = scrubbed(envelope.error, secrets)
        info.cause = scrubbed(envelope.cause, secrets)
    elif response.status_code >= 400:
        info.error = scrubbed(response.text[:200].strip(), secrets) or None
    return info


def transport_error(operation: str, exc: httpx.HTTPError) -> ApiTransportError:
    kind = type(exc).__name__
    info = ApiErrorInfo(operation=operation, error=kind)
    return ApiTransportError(f"{operation}: the API could not be reached ({kind})", info)


def garbage(operation: str, response: httpx.Response, why: str) -> ApiGarbageError:
    """`operation` may be ``""`` (an answer's parser does not know it): the transport
    that called the parser names it (`named`). `why` may quote the answer (a
    validation error's input): scrubbed as `info_for` scrubs."""
    info = info_for(operation, response)
    why = scrubbed(why, sent_secrets(response)) or why
    info.error = why
    return ApiGarbageError(named(operation, f"unreadable answer ({why})"), info)


def named(operation: str, message: str) -> str:
    return f"{operation}: {message}" if operation else message


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (ValueError, UnicodeDecodeError):
        return None


def is_execute_answer(operation: str, status: int, data: Any) -> bool:
    """An error-status body that still reports an execute outcome: a
    ``status: Failed`` envelope, or (4xx only) a swap API's numeric code, whose
    ``-1`` reply has no status. Auth, 429 and bare 5xx bodies are not outcomes."""
    if operation not in EXECUTES or not isinstance(data, dict) or status in (401, 403, 429):
        return False
    if data.get("status") == "Failed":
        return True
    code = data.get("code")
    return (
        operation in SWAP_EXECUTES
        and status < 500
        and isinstance(code, int)
        and not isinstance(code, bool)
        and code <= 0
    )


def classify(
    operation: str, response: httpx.Response, wall_now: float
) -> tuple[Any, JupcronError | None]:
    """(parsed JSON body, the error to raise or retry, or None when usable)."""
    status = response.status_code
    data = _json(response)
    if 200 <= status < 300:
        if data is None:
            return None, garbage(operation, response, "not JSON")
        return data, None
    if is_execute_answer(operation, status, data):
        return data, None
    info = info_for(operation, response, data)
    what = info.error or response.reason_phrase
    if status in (401, 403):
        return data, ApiAuthError(f"{operation}: HTTP {status} {what} (check the API key)", info)
    if status == 429:
        retry_after = response.headers.get("retry-after")
        seconds: float | None = None
        if retry_after is not None:
            try:
                seconds = max(float(retry_after), 0.0)
            except ValueError:
                seconds = None
        if seconds is None and response.headers.get("x-ratelimit-reset"):
            try:
                seconds = max(float(response.headers["x-ratelimit-reset"]) - wall_now, 0.0)
            except ValueError:
                seconds = None
        return data, RateLimitedError(f"{operation}: rate limited (429)", info, seconds)
    if status >= 500:
        return data, ApiServerError(f"{operation}: server error HTTP {status}: {what}", info)
    if retry_later(operation, status, info.error):
        return data, ApiRetryLaterError(f"{operation}: HTTP {status}: {what} (retrying)", info)
    message = f"{operation}: HTTP {status}: {what}"
    if info.cause:
        message += f" ({info.cause})"
    return data, ApiRejectedError(message, info)
