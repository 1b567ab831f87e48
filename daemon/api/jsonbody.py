"""JSON request bodies with exact decimals.

The API types recurring ``minPrice``/``maxPrice`` as JSON numbers. The standard
encoder writes only floats as numbers, and a float rounds a price like
``0.1234567890123456789``; here a `Decimal` is written as a JSON number from
its own digits. Everything else is encoded as `json.dumps` would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def number_text(value: Decimal) -> str:
    """A finite Decimal as JSON number text, digit for digit (no exponent)."""
    if not value.is_finite():
        raise ValueError(f"{value} cannot be sent as a JSON number")
    text = format(value, "f")
    return "0" if text in ("-0", "0") else text


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, Decimal):
        out.append(number_text(value))
    elif isinstance(value, Mapping):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(json.dumps(str(key)))
            out.append(":")
            _write(item, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        out.append(json.dumps(value, allow_nan=False))


# values `json.dumps` writes as `_write` does, inside a flat object (exactly these types)
_FLAT = frozenset({str, int, bool, type(None)})


def encode(value: Any) -> bytes:
    """`value` as compact UTF-8 JSON, Decimals as exact numbers."""
    if type(value) is dict and all(
        type(k) is str and type(v) in _FLAT for k, v in value.items()
    ):  # an execute's body: as json.dumps writes it compactly, with no Decimal to place
        return json.dumps(value, separators=(",", ":")).encode()
    out: list[str] = []
    _write(value, out)
    return "".join(out).encode()
