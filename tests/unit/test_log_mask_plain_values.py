"""`mask_secrets` leaves plain values alone without the per-value walk: the line
it gives is the one the full walk (`_mask_value` on every field) gives, with and
without registered secret values."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupcron.logs import MASK, forget_value, is_secret_key, mask_secrets, mask_value, masking

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
SECRET = "registered-secret-value-1234"


def _walked(event_dict: dict[str, Any]) -> dict[str, Any]:
    """Every field through `_mask_value` (the processor before its fast path)."""
    out = dict(event_dict)
    for key in list(out):
        if key == "event":
            continue
        out[key] = MASK if is_secret_key(key) else masking._mask_value(out[key])
    return out


class Text(str):
    """A str subclass: never taken for a plain string."""


LINES: list[dict[str, Any]] = [
    {"event": "run_signed", "signature": "5" * 88, "run_id": 7, "ok": True, "ratio": 1.5,
     "none": None, "plan": "burst0-0001"},
    {"event": "api_call", "url": "https://u:pw@host/x?api-key=abc&b=1", "note": f"got {JWT}"},
    {"event": "x", "detail": {"api_key": "k", "nested": [f"a {JWT}", ("t", 1)]}, "token": "t"},
    {"event": "x", "message": f"the secret {SECRET} leaked", "sub": Text(f"{SECRET}!"),
     "plain": "nothing here", "url": "http://127.0.0.1:9/a"},
]  # fmt: skip


@pytest.fixture
def registered() -> Iterator[None]:
    mask_value(SECRET)
    yield
    forget_value(SECRET)


@pytest.mark.parametrize("line", LINES)
def test_the_same_line_as_the_full_walk(line: dict[str, Any]) -> None:
    assert mask_secrets(None, "info", dict(line)) == _walked(line)


@pytest.mark.parametrize("line", LINES)
def test_the_same_line_with_a_registered_secret(line: dict[str, Any], registered: None) -> None:
    masked = mask_secrets(None, "info", dict(line))
    assert masked == _walked(line)
    assert SECRET not in repr(masked)
