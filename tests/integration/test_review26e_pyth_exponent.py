"""A Pyth price account with an exponent no real feed has is an unusable reference,
never a crash of the run.

Pyth's ``PriceFeedMessage`` carries ``exponent`` as an i32: a huge one made the
reference's ``Decimal`` overflow (``decimal.Overflow``), a tiny one rounded the price
to 0 (a ``ZeroDivisionError`` for the output mint; for the input mint a reference of
0, which vouches for any route). Either escaped the order step: the run was left
``pending`` with its order made and the scheduler logged ``fire_failed``. Now it is
handled as a zero price is (docs/price-protection.md): under ``price.on_stale:
refuse`` the run is ``rejected`` with the reason on record and nothing signed; under
``warn`` it is signed without the reference check, the warning kept.

Real SQLite store, real signing, the emulator's Pyth accounts read through its
JSON-RPC: the account is the emulator's own ``PriceUpdateV2`` (its packing of Pyth's
layout) with only the exponent field changed, and the price scaled so that the
account still says the same USD price wherever the exponent allows it."""

from __future__ import annotations

import struct
from datetime import UTC, datetime

import pytest

from jupcron.domain import RunStatus
from jupcron.emulator import oracle as emulated
from jupcron.price.oracle import DEFAULT_FEEDS
from tests.fixtures.runner import USDC, Clock, RigFactory, outcome_of

SOL = "So11111111111111111111111111111111111111112"
EXPONENT_AT = 8 + 32 + 1 + 32 + 8 + 8  # discriminator, authority, level, feed id, price, conf
I32_MAX, I32_MIN = 2**31 - 1, -(2**31)


def _with_exponent(monkeypatch: pytest.MonkeyPatch, mint: str, exponent: int) -> None:
    """The emulator serves `mint`'s feed account with `exponent` in place of its own."""
    feed_id = DEFAULT_FEEDS[mint].feed_id
    packed = emulated.price_update_bytes

    def price_update_bytes(feed: str, price: int, conf: int, at: int, slot: int) -> bytes:
        data = bytearray(packed(feed, price, conf, at, slot))
        if feed == feed_id:
            struct.pack_into("<i", data, EXPONENT_AT, exponent)
        return bytes(data)

    monkeypatch.setattr(emulated, "price_update_bytes", price_update_bytes)


CASES = [
    pytest.param(SOL, 999_990, id="output-huge"),  # was decimal.Overflow
    pytest.param(SOL, -1_000_100, id="output-tiny"),  # price 0: was ZeroDivisionError
    pytest.param(USDC, -1_000_100, id="input-tiny"),  # price 0: was a reference of 0, signed
    pytest.param(SOL, I32_MAX, id="output-i32-max"),  # was decimal.InvalidOperation
    pytest.param(USDC, I32_MIN, id="input-i32-min"),  # was decimal.InvalidOperation
    pytest.param(SOL, 40, id="output-beyond-the-bound"),  # was signed against 10^48 USD
    pytest.param(USDC, -40, id="input-beyond-the-bound"),
]


@pytest.mark.parametrize(("mint", "exponent"), CASES)
def test_an_exponent_no_feed_uses_refuses_the_run_with_its_reason(
    make_rig: RigFactory, monkeypatch: pytest.MonkeyPatch, mint: str, exponent: int
) -> None:
    _with_exponent(monkeypatch, mint, exponent)
    clock = Clock(datetime.now(UTC).replace(microsecond=0))
    rig = make_rig(clock=clock, swap_api="swap-v2")  # default policy: on_stale refuse
    plan = rig.plan("swap", name="reference-only")  # 5 USDC -> SOL, no limits
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, clock.now))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.REJECTED, (run.status, run.error)
    assert run.error is not None
    assert "price protection cannot vouch" in run.error
    (detail,) = [d for _, step, d in rig.events(run.id) if step == "ordered"]
    problem = detail["price"]["problem"]
    assert f"exponent {exponent}" in problem
    assert DEFAULT_FEEDS[mint].account in problem
    assert detail["price"]["reference_out"] is None
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.landed() == []


def test_under_on_stale_warn_it_signs_with_the_warning_on_record(
    make_rig: RigFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_exponent(monkeypatch, SOL, 999_990)
    clock = Clock(datetime.now(UTC).replace(microsecond=0))
    rig = make_rig(clock=clock, swap_api="swap-v2", price={"on_stale": "warn"})
    plan = rig.plan("swap", name="reference-warn")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, clock.now))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    (detail,) = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    assert "exponent 999990" in detail["price"]["warning"]
    assert "on_stale: warn" in detail["price"]["warning"]
    assert detail["price"]["reference_out"] is None


def test_an_exponent_within_the_bound_is_used(
    make_rig: RigFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound is generous: -12, about the smallest exponent real feeds use, is read
    as a price (the emulator packs SOL's 150 USD for -8, so this account says 0.015)."""
    _with_exponent(monkeypatch, SOL, -12)
    clock = Clock(datetime.now(UTC).replace(microsecond=0))
    rig = make_rig(clock=clock, swap_api="swap-v2")
    plan = rig.plan("swap", name="reference-small")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, clock.now))
    (detail,) = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    assert "problem" not in detail["price"], detail["price"]
    assert detail["price"]["reference"]["output_usd"] == "0.015000000000"
    assert detail["price"]["reference_out"] == "333333333333"  # 5 USDC at 0.015 USD
