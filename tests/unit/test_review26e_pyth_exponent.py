"""The bound on a Pyth reading's exponent (`jupcron.price.oracle.EXPONENTS`, -32..16),
at its edges: the account is the emulator's ``PriceUpdateV2`` with its exponent field
rewritten (the run-level behaviour: tests/integration/test_review26e_pyth_exponent.py)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from decimal import Decimal

import pytest

from jupcron.emulator.oracle import price_update_bytes
from jupcron.price.oracle import DEFAULT_FEEDS, RECEIVER_PROGRAM, judge

SOL = "So11111111111111111111111111111111111111112"
FEED = DEFAULT_FEEDS[SOL]
EXPONENT_AT = 8 + 32 + 1 + 32 + 8 + 8
T = 1_795_000_000


@dataclass(frozen=True)
class State:
    owner: str
    data: bytes


def account(price: int, exponent: int) -> State:
    data = bytearray(price_update_bytes(FEED.feed_id or "", price, 0, T, 1))  # conf < price
    struct.pack_into("<i", data, EXPONENT_AT, exponent)
    return State(RECEIVER_PROGRAM, bytes(data))


@pytest.mark.parametrize(
    ("price", "exponent", "usd"),
    [
        (150_00000000, -8, Decimal(150)),
        (1, -32, Decimal("1e-32")),  # the least a reading may say
        (2**63 - 1, 16, Decimal(2**63 - 1).scaleb(16)),  # the most
        (15, -12, Decimal("1.5e-11")),  # a sub-cent token's feed
    ],
)
def test_an_exponent_within_the_bound_is_read(price: int, exponent: int, usd: Decimal) -> None:
    reading = judge(SOL, FEED, account(price, exponent), now=T, max_age=120)
    assert reading.problem is None
    assert reading.usd == usd
    assert reading.usd is not None
    assert reading.usd > 0


@pytest.mark.parametrize("exponent", [-33, 17, 999_990, -1_000_100, 2**31 - 1, -(2**31)])
def test_an_exponent_beyond_it_is_an_unusable_reading(exponent: int) -> None:
    reading = judge(SOL, FEED, account(150_00000000, exponent), now=T, max_age=120)
    assert reading.problem is not None
    assert f"exponent {exponent} is outside -32..16" in reading.problem
    assert reading.usd is None  # never computed: no Overflow, no 0
