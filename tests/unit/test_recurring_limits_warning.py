"""`plans validate` on a recurring plan with `limits`: its order carries a least output
per cycle (``min_out_amount``, what `limits` is held to) only for a maxPrice.

Jupiter's DCA program documents ``min_out_amount`` as "effectively a max price" and
``max_out_amount`` as "effectively a min price" (its SDK's createDcaV2 example), so a
plan that sets only minPrice gets an order with no least output, and every run of it
with `limits` is refused by the guard: `plans validate` says so beforehand.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime
from typing import Any

from solders.pubkey import Pubkey

from jupcron.price.limits import PriceLimits
from jupcron.products.recurring.model import RecurringRequest, checks
from jupcron.products.spec import CheckContext
from jupcron.runner.judge import judge
from tests.fixtures.mutate import instruction_data, mutate
from tests.fixtures.verdicts import CORPUS, POLICY, record, refused

DCA = CORPUS["recurring-create-order-sol-usdc"]  # open_dca_v2 at #6, no bounds
LIMITS = CheckContext(now=datetime(2030, 1, 1, tzinfo=UTC), limits=PriceLimits(min_out=1))


def _time(**prices: Any) -> dict[str, Any]:
    return {"time": {**DCA.plan["request"]["params"]["time"], **prices}}


def _warned(params: dict[str, Any]) -> bool:
    request = RecurringRequest.model_validate({**DCA.plan["request"], "params": params})
    return any(f.warning and f.loc == ("limits",) for f in checks(request, LIMITS))


def test_a_min_price_alone_leaves_limits_nothing_to_hold_so_the_run_is_refused() -> None:
    """The order for minPrice alone: a max_out_amount, no min_out_amount."""
    data = instruction_data(DCA.transaction, 6)
    only_most = data[:40] + b"\x00" + b"\x01" + struct.pack("<Q", 20_000_000) + data[42:]
    tx = mutate(DCA.transaction, 6, data=only_most)
    plan = record(DCA.plan, params=_time(minPrice="0.005"))
    price = {"min_out": 1, "reference_out": None, "max_price_deviation_bps": None}
    v = judge(tx, plan, Pubkey.from_string(DCA.wallet), POLICY, ordered={"price": price})
    refused(v, "guarantees no least output")


def test_plans_validate_warns_of_a_min_price_alone_with_limits() -> None:
    assert _warned(_time(minPrice="0.005"))


def test_plans_validate_still_warns_of_no_bound_and_not_of_a_max_price() -> None:
    assert _warned(_time())
    assert not _warned(_time(maxPrice="0.008"))
    assert not _warned(_time(minPrice="0.005", maxPrice="0.008"))
