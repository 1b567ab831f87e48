"""A swap plan that names a ``receiver`` is paid to that receiver, not kept.

The plan's ``receiver`` is where its output goes: a payment to another wallet. The
guard allowed a swap's output to go to "our token account of the plan's output mint,
the plan's receiver's, or the wallet" whatever the plan said, so a hostile API could
answer a plan with a receiver with a swap that keeps the output in our own wallet:
the run was signed and recorded as done, and the receiver was never paid. Here the
genuine answers for the same pair, which pay us, are judged as runs of the same
plans with a receiver added.
"""

from __future__ import annotations

from tests.fixtures.verdicts import CORPUS, refused, verdict
from tests.fixtures.wallet import new_key

METIS = CORPUS["ultra-order-usdc-sol-route_v2-metis"]  # route_v2, USDC -> SOL, to us
SOLFI = CORPUS["ultra-order-sol-usdc-route-solfi"]  # v1 route, SOL -> USDC, to us


def test_the_genuine_answers_are_accepted_for_their_own_plans() -> None:
    assert verdict(METIS).accepted
    assert verdict(SOLFI).accepted


def test_a_swap_keeping_the_output_is_refused_for_a_plan_with_a_receiver() -> None:
    receiver = str(new_key())
    refused(verdict(SOLFI, receiver=receiver), "receiver", receiver)


def test_a_sol_output_kept_by_us_is_refused_for_a_plan_with_a_receiver() -> None:
    receiver = str(new_key())
    refused(verdict(METIS, receiver=receiver), "receiver", receiver)
