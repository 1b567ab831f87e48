"""The refusal rules. Each rule looks at the decoded summary and returns the
reasons it refuses, worded so an operator knows what was wrong and what to do.

The principle: nothing of value leaves the wallet's accounts for an account
that is not ours (see `ours`), whatever program or instruction form moves it.
Token instructions are judged by their effect (`token_rules`), System ones by
the lamports they move (`lamports`), signers by what can sign for us (`signers`);
this module holds the rest and the order they run in.
"""

from __future__ import annotations

from collections.abc import Callable

from jupcron.txguard import rent, vault
from jupcron.txguard.context import Context
from jupcron.txguard.decode import MAX_TX_BYTES, ComputeBudget, TxSummary
from jupcron.txguard.expect import Expectation
from jupcron.txguard.instructions import (
    COMPUTE_BUDGET,
)
from jupcron.txguard.lamports import system, wraps
from jupcron.txguard.orders import jupiter
from jupcron.txguard.signers import fee_payer, signers
from jupcron.txguard.token_rules import associated_token, token

Rule = Callable[[TxSummary, Context], list[str]]


def sanitized(summary: TxSummary, ctx: Context) -> list[str]:
    if summary.sanitize_error is None:
        return []
    return [f"the message is malformed and fails to sanitize ({summary.sanitize_error})"]


def programs(summary: TxSummary, ctx: Context) -> list[str]:
    return [
        f"instruction #{ix.index} calls program {ix.program}, which is not in the allow-list "
        "(add it to guard.extra_programs only if you trust it)"
        for ix in summary.instructions
        if ix.program not in ctx.policy.programs
    ]


def durable_nonce(summary: TxSummary, ctx: Context) -> list[str]:
    if not summary.uses_durable_nonce:
        return []
    return ["the transaction uses a durable nonce: it would never expire"]


def size(summary: TxSummary, ctx: Context) -> list[str]:
    if summary.size <= MAX_TX_BYTES:
        return []
    return [f"the transaction is {summary.size} bytes; the network takes at most {MAX_TX_BYTES}"]


def _fee_text(budget: ComputeBudget) -> str:
    if budget.unit_limit is not None:
        units = f"{budget.effective_limit} units"
    else:
        units = (
            f"the runtime's default of {budget.effective_limit} units ("
            f"{budget.builtin_instructions} builtin instructions x 3,000 + "
            f"{budget.other_instructions} others x 200,000)"
        )
    return (
        f"{budget.signatures} signatures x 5,000 + "
        f"{budget.unit_price_micro_lamports or 0} micro-lamports x {units}"
    )


def fee(summary: TxSummary, ctx: Context) -> list[str]:
    """The fee as the runtime computes it (`decode.compute_budget`), capped when our
    wallet pays it (by the guard's caps, and the plan's own priority fee:
    `plan_priority_fee`); compute-budget instructions the runtime would refuse are
    refused."""
    reasons = []
    seen: set[str] = set()
    for ix in summary.instructions:
        if ix.program != COMPUTE_BUDGET:
            continue
        if ix.malformed:
            reasons.append(f"instruction #{ix.index}: Compute Budget data is malformed")
        elif ix.name in seen:
            reasons.append(
                f"instruction #{ix.index}: Compute Budget {ix.name} appears twice "
                "(the runtime refuses the transaction)"
            )
        seen.add(ix.name)
    if summary.fee_payer != ctx.wallet:
        return reasons  # someone else pays the fee (fee_payer says whether we allow that)
    budget, policy = summary.compute_budget, ctx.policy
    if budget.priority_fee_lamports > policy.max_priority_fee_lamports:
        reasons.append(
            f"the priority fee of {budget.priority_fee_lamports} lamports "
            f"({budget.unit_price_micro_lamports} micro-lamports x {budget.effective_limit} units) "
            f"is above the cap of {policy.max_priority_fee_lamports} lamports "
            "(guard.max_priority_fee_lamports)"
        )
    reasons += plan_priority_fee(budget, ctx.expect)
    if budget.total_fee_lamports > policy.max_fee_lamports:
        reasons.append(
            f"our wallet would pay a fee of {budget.total_fee_lamports} lamports "
            f"({_fee_text(budget)}), above the cap of {policy.max_fee_lamports} lamports "
            "(guard.max_fee_lamports)"
        )
    return reasons


# the runtime rounds the priority fee up (ceil(price x limit / 10^6)); an API that sizes
# the price for the plan's priorityFeeLamports rounds it down, so its fee may come out
# one lamport above (the genuine Ultra answer: 696,237 declared, 696,238 paid)
PRIORITY_FEE_ROUNDING = 1


def plan_priority_fee(budget: ComputeBudget, expect: Expectation | None) -> list[str]:
    """The plan's ``priorityFeeLamports`` (where its order was sent it: the
    `Expectation`'s) as a cap on the priority fee our wallet pays, less the runtime's
    rounding up: the guard's `max_priority_fee_lamports` is a ceiling for every plan,
    not the plan's own term."""
    if expect is None or expect.priority_fee_lamports is None:
        return []
    most = expect.priority_fee_lamports + PRIORITY_FEE_ROUNDING
    if budget.priority_fee_lamports <= most:
        return []
    return [
        f"the priority fee of {budget.priority_fee_lamports} lamports "
        f"({budget.unit_price_micro_lamports} micro-lamports x {budget.effective_limit} units) "
        f"is above the plan's priorityFeeLamports of {expect.priority_fee_lamports} lamports "
        f"(plus {PRIORITY_FEE_ROUNDING} for the runtime's rounding up)"
    ]


def trigger_v2(summary: TxSummary, ctx: Context) -> list[str]:
    rent = ctx.policy.order_rent_allowance_lamports
    return vault.trigger_v2(summary, ctx.expect, ctx.wallet, rent)


RULES: tuple[Rule, ...] = (
    size,
    sanitized,
    fee_payer,
    signers,
    programs,
    system,
    wraps,
    durable_nonce,
    token,
    associated_token,
    rent.plan_mints,
    jupiter,
    trigger_v2,
    fee,
)


def evaluate(summary: TxSummary, ctx: Context) -> list[str]:
    reasons: list[str] = []
    for rule in RULES:
        reasons += rule(summary, ctx)
    return reasons
