"""Request bodies: Decimals become JSON numbers digit for digit."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from jupcron.api.jsonbody import encode, number_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Decimal("0.1"), "0.1"),
        (Decimal("0.000123456789012345678901"), "0.000123456789012345678901"),
        (Decimal("12345678901234567890.123456789"), "12345678901234567890.123456789"),
        (Decimal("1E+3"), "1000"),
        (Decimal("1.5E-7"), "0.00000015"),
        (Decimal("250.50"), "250.50"),
        (Decimal("-0"), "0"),
    ],
)
def test_a_decimal_is_written_as_its_own_digits(value: Decimal, text: str) -> None:
    assert number_text(value) == text
    assert json.loads(text, parse_float=Decimal, parse_int=Decimal) == value


@pytest.mark.parametrize("value", [Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity")])
def test_a_decimal_that_is_no_number_is_refused(value: Decimal) -> None:
    with pytest.raises(ValueError, match="cannot be sent as a JSON number"):
        encode({"minPrice": value})


def test_a_body_is_what_json_dumps_writes_but_for_decimals() -> None:
    body: dict[str, Any] = {
        "user": "Ab\u00e9\"", "params": {"time": {"inAmount": 200_000_000, "minPrice": Decimal("0.1"),
                                                 "maxPrice": None, "flags": [True, False, 1.5]}},
    }  # fmt: skip
    raw = encode(body)
    assert raw == (
        b'{"user":"Ab\\u00e9\\"","params":{"time":{"inAmount":200000000,"minPrice":0.1,'
        b'"maxPrice":null,"flags":[true,false,1.5]}}}'
    )
    assert json.loads(raw, parse_float=Decimal)["params"]["time"]["minPrice"] == Decimal("0.1")
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode({"x": float("nan")})


class _Ordered(dict[str, Any]):
    pass


@pytest.mark.parametrize(
    "body",
    [
        {"signedTransaction": "AQAB+/==", "requestId": "r-1", "lastValidBlockHeight": "12"},
        {"a": 'é"\\\n\t\u2028😀', "n": -7, "big": 10**30, "yes": True, "no": False, "none": None},
        {},
        _Ordered(a="x"),  # not a plain dict: the general writer
        {"nested": {"a": "b"}, "list": ["c"]},
    ],
)
def test_a_flat_body_is_written_as_the_general_writer_writes_it(body: dict[str, Any]) -> None:
    from jupcron.api.jsonbody import _write

    out: list[str] = []
    _write(body, out)
    assert encode(body) == "".join(out).encode()
