"""A price-based recurring plan (``params.price``, Value Average) answered with a
time-based DCA order.

The plan loader promises such a plan's runs "will be rejected: the Value Average
program's interface is not public, so txguard cannot check what it is told". A
hostile API can instead answer with the DCA program's ``open_dca_v2`` (decodable, and
a ``recurring_open`` like any recurring plan's): the guard then held only the deposit
and the mints, since the plan has no time terms, so the order's cadence, per-cycle
amount and price bounds were whatever the API chose. The genuine DCA answer below
swaps the plan's whole deposit in two cycles of 5 minutes at any price, where the
plan asked to buy 10 USDC worth per day.
"""

from __future__ import annotations

from tests.fixtures.verdicts import CORPUS, refused, verdict

DCA = CORPUS["recurring-create-order-sol-usdc"]  # open_dca_v2: 2 x 0.1 SOL, every 300 s
PRICE_PLAN = {
    "params": {
        "price": {
            "depositAmount": 200_000_000,  # the DCA's deposit, to the lamport
            "incrementUsdcValue": 10_000_000,
            "interval": 86_400,
        }
    }
}


def test_the_genuine_dca_is_accepted_for_its_own_time_plan() -> None:
    assert verdict(DCA).accepted


def test_a_dca_order_is_refused_for_a_price_based_plan() -> None:
    v = verdict(DCA, **PRICE_PLAN)
    refused(v, "price-based")
