"""A recurring order's per-cycle price bounds, held to the plan's minPrice / maxPrice.

Jupiter's DCA program (``open_dca_v2``) takes ``min_out_amount`` and
``max_out_amount``, each an ``Option<u64>`` of output per cycle; the order account
keeps them as plain u64, where 0 is "no bound" (the Recurring API's own order
listing shows ``rawMinOutAmount: "0"`` for an order without one:
openapi-spec/recurring/recurring.yaml in jup-ag/docs). So ``Some(0)`` is no bound,
and a pair whose least output is above its most output can never fill.

Every case is the genuine createOrder answer (tests/fixtures/real,
recurring-create-order-sol-usdc: 0.2 SOL in 2 cycles of 0.1 SOL, SOL -> USDC,
no bounds) with only its bounds changed, judged as a run of its plan is judged.
"""

from __future__ import annotations

import struct
from typing import Any

from tests.fixtures.mutate import instruction_data, mutate
from tests.fixtures.verdicts import CORPUS, refused, verdict

DCA = CORPUS["recurring-create-order-sol-usdc"]  # open_dca_v2 at #6
OPEN_DCA = 6
BOUNDS_AT = 40  # after discriminator, application_idx, in_amount, per cycle, cycle (8 each)


def _option(value: int | None) -> bytes:
    return b"\x00" if value is None else b"\x01" + struct.pack("<Q", value)


def _bounded(min_out: int | None, max_out: int | None) -> str:
    """The genuine open_dca_v2 with its (absent) bounds replaced."""
    data = instruction_data(DCA.transaction, OPEN_DCA)
    assert data[BOUNDS_AT : BOUNDS_AT + 2] == b"\x00\x00"  # the genuine answer: none, none
    new = data[:BOUNDS_AT] + _option(min_out) + _option(max_out) + data[BOUNDS_AT + 2 :]
    return mutate(DCA.transaction, OPEN_DCA, data=new)


def _params(**prices: Any) -> dict[str, Any]:
    return {"time": {**DCA.plan["request"]["params"]["time"], **prices}}


# 0.1 SOL a cycle, into USDC; a price as input paid per unit of output (SOL per USDC):
# at most 0.008 -> at least 12.5 USDC out, at least 0.005 -> at most 20 USDC out
LOW, HIGH = "0.005", "0.008"
LEAST, MOST = 12_500_000, 20_000_000


def test_the_plans_two_bounds_in_the_order_are_accepted() -> None:
    assert verdict(DCA, _bounded(LEAST, MOST), params=_params(minPrice=LOW, maxPrice=HIGH)).accepted


def test_a_zero_bound_is_no_bound_and_drops_the_plans_price_limit() -> None:
    """The plan sets maxPrice; the order carries min_out_amount Some(0): the account
    stores 0, which is no bound, so the order buys at any price."""
    v = verdict(DCA, _bounded(0, None), params=_params(maxPrice=HIGH))
    refused(v, "min_out_amount of 0", "bounds nothing")


def test_a_zero_bound_beside_a_real_one_is_refused() -> None:
    v = verdict(DCA, _bounded(LEAST, 0), params=_params(minPrice=LOW, maxPrice=HIGH))
    refused(v, "max_out_amount of 0", "bounds nothing")


def test_a_zero_bound_is_refused_where_the_plan_sets_none_too() -> None:
    """A genuine answer writes None for a bound the plan does not set; Some(0) is no
    answer to any plan."""
    refused(verdict(DCA, _bounded(0, None)), "min_out_amount of 0", "bounds nothing")


def test_inverted_bounds_that_can_never_fill_are_refused() -> None:
    """The plan's two bounds, swapped: a least output above the most output, so no
    cycle can ever fill and the deposit sits in the order (a run that silently
    never happens)."""
    v = verdict(DCA, _bounded(MOST, LEAST), params=_params(minPrice=LOW, maxPrice=HIGH))
    refused(v, f"at least {MOST}", f"at most {LEAST}", "can never fill")


def test_equal_bounds_are_not_inverted() -> None:
    """minPrice == maxPrice is a plan the schema allows: one exact output a cycle."""
    v = verdict(DCA, _bounded(LEAST, LEAST), params=_params(minPrice=HIGH, maxPrice=HIGH))
    assert v.accepted, v.reasons


# --- which bound, and how far apart ---------------------------------------------------

# each bound answers one of the plan's prices (min_out_amount its maxPrice, max_out_amount
# its minPrice), and with both, most / least out is maxPrice / minPrice


def test_the_plans_max_price_as_a_least_output_is_accepted() -> None:
    assert verdict(DCA, _bounded(LEAST, None), params=_params(maxPrice=HIGH)).accepted


def test_a_bound_on_the_other_side_of_the_plans_is_refused() -> None:
    """The plan's maxPrice (do not buy dearer) answered with a max_out_amount: the
    order then caps what each cycle buys and buys at any price, the plan's
    protection turned around; the count of bounds alone (1 and 1) cannot tell."""
    v = verdict(DCA, _bounded(None, LEAST), params=_params(maxPrice=HIGH))
    refused(v, "has max_out_amount (a minPrice)", "the plan sets no minPrice")
    refused(v, "has no min_out_amount (a maxPrice)", "the plan sets maxPrice")


def test_both_bounds_widened_away_from_the_plans_are_refused() -> None:
    """1 .. u64::MAX is two bounds, the plan's count, in the right order: and no bound."""
    v = verdict(DCA, _bounded(1, 2**64 - 1), params=_params(minPrice=LOW, maxPrice=HIGH))
    refused(v, "bounds each cycle to 1..18446744073709551615", "maxPrice / minPrice is 1.6")


def test_bounds_rounded_to_a_base_unit_are_the_plans() -> None:
    params = _params(minPrice=LOW, maxPrice=HIGH)
    assert verdict(DCA, _bounded(LEAST - 1, MOST), params=params).accepted
    assert verdict(DCA, _bounded(LEAST, MOST + 1), params=params).accepted
    refused(verdict(DCA, _bounded(LEAST, MOST + 3), params=params), "a range of")
