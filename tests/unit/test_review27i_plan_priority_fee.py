"""The plan's own ``priorityFeeLamports`` is not held: only the config's cap is.

A swap plan may state the priority fee it pays (Swap V2's ``priorityFeeLamports``,
with ``broadcastFeeType`` maxCap or exactFee: either way at most that many
lamports). txguard caps the fee by `guard.max_priority_fee_lamports` and
`guard.max_fee_lamports` only (0.01 SOL each by default), so an answer may burn up
to 0.01 SOL of priority fee per run whatever the plan said. The genuine Ultra answer
below pays 696,238 lamports (its answer declares 696,237: the runtime rounds the
fee up), 696 times the plan's 1,000.

Not fixed here (a design decision): the term applies only where the plan's API was
sent the parameter (Ultra is not: `swap_query`'s ``not_sent``), and the hold needs
the runtime's rounding up (a lamport) as slack, since Jupiter's declared fee rounds
down.
"""

from __future__ import annotations

import pytest

from tests.fixtures.verdicts import CORPUS, refused, verdict

METIS = CORPUS["ultra-order-usdc-sol-route_v2-metis"]  # 97,848 units at 7,115,503 µlamports


def test_the_genuine_answer_pays_its_own_priority_fee() -> None:
    v = verdict(METIS)
    assert v.accepted
    assert v.summary.compute_budget.priority_fee_lamports == 696_238


@pytest.mark.xfail(strict=True, reason="the plan's priorityFeeLamports is not a guard term")
def test_a_priority_fee_above_the_plans_own_is_refused() -> None:
    refused(verdict(METIS, priorityFeeLamports=1_000), "priority fee", "1000")
