"""Who signs and who pays the fee: our wallet, and besides it only the co-signers the
transaction's own form explains (a Trigger V2 vault, a JupiterZ maker, an RFQ-v2 fill
authority, or, without a plan, a signer that can pay nothing but us)."""

from __future__ import annotations

from jupcron.txguard import vault
from jupcron.txguard.context import Context
from jupcron.txguard.decode import TxSummary
from jupcron.txguard.instructions import (
    TOKEN_PROGRAMS,
)
from jupcron.txguard.jupiter import AGGREGATOR, ORDER_ENGINE
from jupcron.txguard.token import Effect


def _makers(summary: TxSummary, ctx: Context) -> frozenset[str]:
    """The market makers of the JupiterZ fills we are the taker of: each pays the
    fee and signs its side (the order engine's IDL)."""
    return frozenset(
        ix.role["maker"]
        for ix in summary.instructions
        if ix.program == ORDER_ENGINE and ix.name == "fill" and not ix.malformed
        and ix.role.get("owner") == ctx.wallet and "maker" in ix.role
    )  # fmt: skip


def _fill_authority(summary: TxSummary) -> bool:
    """An aggregator route with a JupiterZ RFQ-v2 step: its fill authority co-signs."""
    return any(
        ix.program == AGGREGATOR and "JupiterRfqV2" in dict(ix.fields).get("route", "")
        for ix in summary.instructions
    )


def fee_payer(summary: TxSummary, ctx: Context) -> list[str]:
    if summary.fee_payer == ctx.wallet or ctx.relaxed:
        return []
    if summary.fee_payer in _makers(summary, ctx):
        return []  # a JupiterZ market maker pays the fee of its own fill
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
        # Trigger V2: the vault and its co-signer; JupiterZ: the maker of our fill;
        # an RFQ-v2 route: its read-only fill authority (a read-only signer can pay nothing)
        allowed = vault.cosigners(ctx.expect) | _makers(summary, ctx)
        read_only_ok = _fill_authority(summary)
        reasons += [
            f"another signer is required besides our wallet: {s.address}"
            for s in summary.signers
            if s.address not in (ctx.wallet, summary.fee_payer)
            and s.address not in allowed
            and not (read_only_ok and not s.writable)
            and not (ctx.expect is None and _pays_only_us(summary, ctx, s.address, s.writable))
        ]
    return reasons


def _pays_only_us(summary: TxSummary, ctx: Context, signer: str, writable: bool) -> bool:
    """Without a plan (`jupcron tx inspect`): a co-signer whose signature can only send
    value to us — read-only and named by no instruction, or an authority (or multisig
    co-signer) only of token moves and closes that pay our accounts (a Trigger V2
    vault's withdrawal)."""
    named = [ix for ix in summary.instructions if signer in ix.accounts]
    if not named:
        return not writable
    for ix in named:
        role = ix.role
        authorises = role.get("authority") == signer or signer in ix.cosigners
        if ix.program not in TOKEN_PROGRAMS or not authorises:
            return False
        if any(account == signer for name, account in ix.roles if name != "authority"):
            return False
        effect = Effect(ix.effect) if ix.effect else None
        if effect is Effect.MOVES and role.get("destination") in ctx.ours.tokens:
            continue
        if effect is Effect.CLOSES and ctx.ours.takes_lamports(role.get("destination", "")):
            continue
        return False
    return True
