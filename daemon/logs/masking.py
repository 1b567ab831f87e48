"""What a log line (or a text bound for the store) may not show: fields named like a
secret, URL passwords and secret query values, JSON Web Tokens, and the secret values
registered while in use (the API key, the Trigger V2 JWT). `mask_secrets` is a step of
the log chain (`jupcron.logs`); `without_secrets` serves any text."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from typing import Any

from structlog.typing import EventDict, WrappedLogger

MASK = "***"

# a key whose value must never be shown (matched on the lower-cased key name)
_SECRET_KEY = re.compile(
    r"(^|_|-)(keys?|secrets?|password|passwd|passphrase|tokens?|keypair|seed|"
    r"signed_?transaction|signed_?tx|authorization|credentials?)$"
)
# key names that contain 'key' but are not secrets
_NOT_SECRET = frozenset({"idempotency_key", "key_file", "public_key", "pubkey", "keypair_path"})
# ``scheme://user:password@host`` inside any string value; the user runs to the first
# ':' as SQLAlchemy reads it, an '@' in it included (Azure's ``user@server``)
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^:/\s]+:)[^@\s]+@")
# ``?api-key=…``, ``&token=…`` in a URL inside any string value
_URL_QUERY_SECRET = re.compile(
    r"(?P<head>[?&][^=&\s#]*(?:key|token|secret|pass|auth|sig)[^=&\s#]*=)[^&\s#]+", re.I
)

# a JSON Web Token (header.payload.signature, base64url): never shown, whatever field
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*")
# secret values in use (the Trigger V2 JWT): masked wherever they appear in a line
# (replaced whole under the lock, read without it: a line never waits for a writer)
_SECRET_VALUES: frozenset[str] = frozenset()
_SECRETS_LOCK = threading.Lock()


def mask_value(secret: str) -> None:
    """Mask this exact value wherever it appears in any log line from now on."""
    global _SECRET_VALUES
    if len(secret) >= 8:
        with _SECRETS_LOCK:
            _SECRET_VALUES = _SECRET_VALUES | {secret}


def forget_value(secret: str) -> None:
    """Stop looking for a value no longer in use (an expired JWT)."""
    global _SECRET_VALUES
    with _SECRETS_LOCK:
        _SECRET_VALUES = _SECRET_VALUES - {secret}


def without_secrets(value: str) -> str:
    """`value` with the registered secret values and any JWT replaced by ``'***'``
    (for text bound for the store: an API's answer could echo a token)."""
    for secret in _SECRET_VALUES:
        if secret in value:
            value = value.replace(secret, MASK)
    if "eyJ" in value:
        value = _JWT.sub(MASK, value)
    return value


def _mask_text(value: str) -> str:
    value = without_secrets(value)
    if "://" not in value:
        return value
    value = _URL_PASSWORD.sub(r"\g<head>" + MASK + "@", value)
    return _URL_QUERY_SECRET.sub(r"\g<head>" + MASK, value)


@functools.lru_cache(maxsize=4096)
def is_secret_key(name: str) -> bool:
    """True when a field called ``name`` may hold a secret (remembered per name: a
    log line asks it of every key, and the names are few)."""
    lowered = name.lower()
    if lowered in _NOT_SECRET:
        return False
    return bool(_SECRET_KEY.search(lowered))


# values with nothing to mask (exactly these types: a subclass goes the long way)
_PLAIN = frozenset({int, float, bool, type(None)})


def _mask_value(value: Any, depth: int = 0) -> Any:
    if type(value) in _PLAIN or depth > 6:
        return value
    if isinstance(value, str):
        return _mask_text(value)
    if isinstance(value, Mapping):
        return {
            k: (MASK if isinstance(k, str) and is_secret_key(k) else _mask_value(v, depth + 1))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(_mask_value(v, depth + 1) for v in value)
    return value


def mask_secrets(_logger: WrappedLogger, _name: str, event_dict: EventDict) -> EventDict:
    """structlog processor: replace secret-looking fields by ``'***'``.

    A plain value (a number, a plain string with nothing a mask could match) is left
    as it is without a call: what `_mask_value` would give it, at a fraction of the
    cost (most of a line's fields are such)."""
    plain = _PLAIN
    for key, value in list(event_dict.items()):
        if key == "event":  # ours is a fixed name; a library's is its whole message
            if type(value) is str and (_SECRET_VALUES or "eyJ" in value or "://" in value):
                event_dict[key] = _mask_text(value)
            continue
        if is_secret_key(key):
            event_dict[key] = MASK
            continue
        kind = type(value)
        if kind in plain:
            continue
        if kind is str and not _SECRET_VALUES and "eyJ" not in value and "://" not in value:
            continue  # `_mask_text` would give it back unchanged
        event_dict[key] = _mask_value(value)
    return event_dict


def mask_rendered(_logger: WrappedLogger, _name: str, event_dict: EventDict) -> EventDict:
    """structlog processor, after ``format_exc_info``: the text masks of `mask_secrets`
    on the traceback (and stack) it rendered, which quotes each exception's message
    as written: a line's ``error=str(exc)`` was masked, its ``exc_info=exc`` not."""
    for key in ("exception", "stack"):
        value = event_dict.get(key)
        if type(value) is str:
            event_dict[key] = _mask_text(value)
    return event_dict
