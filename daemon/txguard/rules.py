"""The refusal rules. Each rule looks at the decoded summary and returns the
reasons it refuses, worded so an operator knows what was wrong and what to do.

"Ours" is our wallet and its associated token accounts (SPL Token and
Token-2022) for every mint the message names (plus wrapped SOL and any mints
the caller knows from the order): nothing else may receive our lamports, a
token delegation or the rent of a closed token account.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from daemon.txguard.decode import Instruction, TxSummary
from daemon.txguard.instructions import (
    COMPUTE_BUDGET,
    NONCE_INSTRUCTIONS,
    SYSTEM,
    TOKEN_PROGRAMS,
    WRAPPED_SOL,
)
from daemon.txguard.policy import GuardPolicy


@dataclass(frozen=True)
class Context:
    wallet: str
    ours: frozenset[str]
    policy: GuardPolicy
    gasless: bool  # the API marked this swap gasless/RFQ

    @property
    def relaxed(self) -> bool:
        """Fee payer and extra signers may be Jupiter's: a gasless swap, if allowed."""
        return self.gasless and self.policy.allow_gasless

    def is_ours(self, address: str) -> bool:
        return address in self.ours


def ours(wallet: Pubkey, summary: TxSummary, mints: Iterable[str] = ()) -> frozenset[str]:
    """Our wallet plus its associated token accounts for every candidate mint."""
    found = {str(wallet)}
    candidates = set(summary.static_keys) | {WRAPPED_SOL} | set(mints)
    for candidate in candidates:
        found.update(token_accounts(wallet, candidate))
    return frozenset(found)


@lru_cache(maxsize=8192)
def token_accounts(wallet: Pubkey, mint: str) -> tuple[str, ...]:
    """The wallet's associated token accounts for `mint` under each token program
    (none if `mint` is not a public key). A pure derivation, so it is cached: a
    transaction names the same few dozen keys run after run."""
    try:
        key = Pubkey.from_string(mint)
    except ValueError:
        return ()
    return tuple(
        str(get_associated_token_address(wallet, key, Pubkey.from_string(program)))
        for program in TOKEN_PROGRAMS
    )


Rule = Callable[[TxSummary, Context], list[str]]


def sanitized(summary: TxSummary, ctx: Context) -> list[str]:
    if summary.sanitize_error is None:
        return []
    return [f"the message is malformed and fails to sanitize ({summary.sanitize_error})"]


def fee_payer(summary: TxSummary, ctx: Context) -> list[str]:
    if summary.fee_payer == ctx.wallet or ctx.relaxed:
        return []
    hint = ""
    if ctx.gasless:
        hint = " (a gasless/RFQ swap; allow it with guard.allow_gasless: true)"
    return [f"the fee payer is {summary.fee_payer}, not our wallet {ctx.wallet}{hint}"]


def signers(summary: TxSummary, ctx: Context) -> list[str]:
    addresses = [s.address for s in summary.signers]
    reasons = []
    if ctx.wallet not in addresses:
        reasons.append(f"our wallet {ctx.wallet} is not a required signer: nothing of ours to sign")
    if not ctx.relaxed:
        reasons += [
            f"another signer is required besides our wallet: {extra}"
            for extra in addresses
            if extra not in (ctx.wallet, summary.fee_payer)
        ]
    return reasons


def programs(summary: TxSummary, ctx: Context) -> list[str]:
    return [
        f"instruction #{ix.index} calls program {ix.program}, which is not in the allow-list "
        "(add it to guard.extra_programs only if you trust it)"
        for ix in summary.instructions
        if ix.program not in ctx.policy.programs
    ]


def _system(ix: Instruction, ctx: Context) -> str | None:
    role, fields = ix.role, dict(ix.fields)
    where = f"instruction #{ix.index}: System {ix.name}"
    touches = ctx.wallet in ix.accounts or ctx.wallet in fields.values()
    if ix.name in ("transfer", "transfer_with_seed", "create_account", "create_account_with_seed"):
        payer = role.get("base") if ix.name == "transfer_with_seed" else role.get("from")
        to = role.get("to", "?")
        if payer == ctx.wallet and not ctx.is_ours(to):
            amount = fields.get("lamports", "?")
            return f"{where} moves {amount} lamports from our wallet to {to}, which is not ours"
        return None
    if ix.name in ("assign", "assign_with_seed", "allocate", "allocate_with_seed"):
        return (
            f"{where} touches our wallet (it would change its owner or size)" if touches else None
        )
    if ix.name in NONCE_INSTRUCTIONS:
        return f"{where} touches our wallet (a durable-nonce instruction)" if touches else None
    if touches:
        return f"{where} touches our wallet and is not understood"
    return None


def system(summary: TxSummary, ctx: Context) -> list[str]:
    reasons = []
    for ix in summary.instructions:
        if ix.program == SYSTEM and (reason := _system(ix, ctx)):
            reasons.append(reason)
    return reasons


def durable_nonce(summary: TxSummary, ctx: Context) -> list[str]:
    if not summary.uses_durable_nonce:
        return []
    return ["the transaction uses a durable nonce: it would never expire"]


def token(summary: TxSummary, ctx: Context) -> list[str]:
    reasons = []
    for ix in summary.instructions:
        if ix.program not in TOKEN_PROGRAMS:
            continue
        role, where = ix.role, f"instruction #{ix.index}: {ix.title}"
        if ix.name == "set_authority":
            account = role.get("account", "?")
            new = dict(ix.fields).get("new_authority", "?")
            reasons.append(f"{where} hands an authority over {account} to {new}")
        elif ix.name in ("approve", "approve_checked"):
            delegate = role.get("delegate", "?")
            if not ctx.is_ours(delegate):
                reasons.append(f"{where} delegates our tokens to {delegate}, which is not ours")
        elif ix.name == "close_account":
            destination = role.get("destination", "?")
            if not ctx.is_ours(destination):
                reasons.append(
                    f"{where} sends the closed account's rent to {destination}, which is not ours"
                )
        elif ix.malformed:
            reasons.append(f"{where}: the instruction data is malformed")
    return reasons


def priority_fee(summary: TxSummary, ctx: Context) -> list[str]:
    reasons = []
    seen: set[str] = set()
    for ix in summary.instructions:
        if ix.program != COMPUTE_BUDGET:
            continue
        if ix.malformed:
            reasons.append(f"instruction #{ix.index}: Compute Budget data is malformed")
        elif ix.name in seen:
            reasons.append(f"instruction #{ix.index}: Compute Budget {ix.name} appears twice")
        seen.add(ix.name)
    budget = summary.compute_budget
    cap = ctx.policy.max_priority_fee_lamports
    if budget.priority_fee_lamports > cap:
        reasons.append(
            f"the priority fee of {budget.priority_fee_lamports} lamports "
            f"({budget.unit_price_micro_lamports} micro-lamports x {budget.effective_limit} units) "
            f"is above the cap of {cap} lamports (guard.max_priority_fee_lamports)"
        )
    return reasons


RULES: tuple[Rule, ...] = (
    sanitized,
    fee_payer,
    signers,
    programs,
    system,
    durable_nonce,
    token,
    priority_fee,
)


def evaluate(summary: TxSummary, ctx: Context) -> list[str]:
    reasons: list[str] = []
    for rule in RULES:
        reasons += rule(summary, ctx)
    return reasons
