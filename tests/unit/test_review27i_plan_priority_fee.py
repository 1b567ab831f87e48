"""The plan's own ``priorityFeeLamports`` is a guard term, beside the config's cap.

A swap plan may state the priority fee it pays (Swap V2's ``priorityFeeLamports``,
with ``broadcastFeeType`` maxCap or exactFee: either way at most that many
lamports). txguard held the fee to `guard.max_priority_fee_lamports` and
`guard.max_fee_lamports` only (0.01 SOL each by default), so an answer could burn up
to 0.01 SOL of priority fee per run whatever the plan said. The genuine Ultra answer
below pays 696,238 lamports (its answer declares 696,237: the runtime rounds the
fee up), 696 times a plan's 1,000.

Now held: where the order was sent the parameter (not where `swap_query` left it
out, ``not_sent`` in the ``ordered`` event: Ultra does not take it), the fee our
wallet pays is at most the plan's, plus one lamport for the runtime's rounding up
(`jupcron.txguard.rules.plan_priority_fee`); a plan's own fee that covers the answer
passes, to the lamport.
"""

from __future__ import annotations

from dataclasses import replace

from tests.fixtures.verdicts import CORPUS, refused, verdict

METIS = CORPUS["ultra-order-usdc-sol-route_v2-metis"]  # 97,848 units at 7,115,503 µlamports


def test_the_genuine_answer_pays_its_own_priority_fee() -> None:
    v = verdict(METIS)
    assert v.accepted
    assert v.summary.compute_budget.priority_fee_lamports == 696_238


def test_a_priority_fee_above_the_plans_own_is_refused() -> None:
    refused(verdict(METIS, priorityFeeLamports=1_000), "priority fee", "1000")


def test_the_plans_own_fee_holds_with_a_lamport_for_the_runtimes_rounding() -> None:
    assert verdict(METIS, priorityFeeLamports=696_237).accepted  # what the answer declared
    refused(verdict(METIS, priorityFeeLamports=696_236), "priority fee", "696236")


def test_a_fee_the_order_was_not_sent_is_no_term() -> None:
    """Ultra is not sent ``priorityFeeLamports`` (`swap_query`'s ``not_sent``): the
    plan's figure is no term of an order that never heard of it."""
    ordered = {**METIS.ordered, "not_sent": ["priorityFeeLamports"]}
    tx = replace(METIS, ordered=ordered)
    assert verdict(tx, priorityFeeLamports=1_000).accepted
