"""SPL Token, Token-2022 and ATA instructions judged by their effect: nothing of ours
leaves for an account that is not ours, and our rent creates only accounts of ours (of
the plan's mints: `rent`)."""

from __future__ import annotations

from jupcron.txguard.context import Context
from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.instructions import (
    ASSOCIATED_TOKEN,
    TOKEN_PROGRAMS,
)
from jupcron.txguard.ours import TOKEN_ACCOUNT_SPACE, ata, token_account_space
from jupcron.txguard.token import Effect


def _moves(ix: Instruction, ctx: Context, ours: bool) -> str | None:
    role, where = ix.role, f"instruction #{ix.index}: {ix.title}"
    amount = dict(ix.fields).get("amount", "?")
    source, to = role.get("source", "?"), role.get("destination", "?")
    if (ours or ctx.is_ours(source)) and to not in ctx.ours.tokens:
        return f"{where} moves {amount} of our tokens from {source} to {to}, which is not ours"
    return None


def _lamports_out(ix: Instruction, ctx: Context, ours: bool) -> str | None:
    role, where = ix.role, f"instruction #{ix.index}: {ix.title}"
    source = role.get("account") or role.get("source") or ""
    to = role.get("destination", "?")
    if (ours or ctx.is_ours(source)) and not ctx.ours.takes_lamports(to):
        what = "the closed account's lamports" if ix.effect == Effect.CLOSES else "lamports"
        return f"{where} sends {what} to {to}, which is not ours"
    return None


def _may_delegate(delegate: str, ctx: Context) -> bool:
    """A delegate spends by signing: only our wallet, or one of its associated token
    accounts (the ATA program signs for one only in ``recover_nested``, with the
    wallet's signature, paying the wallet). Off the curve is not enough: a program
    signs for its own derived addresses, and an account this transaction initialises
    as ours may sit at one (or at a key the API generated)."""
    if delegate == ctx.wallet:
        return True
    mint = ctx.ours.mint_of.get(delegate)
    return bool(mint) and any(ata(ctx.wallet, mint or "", p) == delegate for p in TOKEN_PROGRAMS)


def _token(ix: Instruction, ctx: Context) -> str | None:
    """The value principle for one token instruction: nothing of ours leaves to an
    account that is not ours, whatever form the instruction takes."""
    role, fields = ix.role, dict(ix.fields)
    where = f"instruction #{ix.index}: {ix.title}"
    if ix.malformed or not ix.effect:
        return f"{where}: the instruction data is malformed or of an unknown kind"
    ours = ctx.acts_for_us(ix)
    effect = Effect(ix.effect)
    amount = fields.get("amount", "?")
    if effect is Effect.MOVES:
        return _moves(ix, ctx, ours)
    if effect in (Effect.CLOSES, Effect.WITHDRAWS):
        return _lamports_out(ix, ctx, ours)
    if effect is Effect.BURNS and (ours or ctx.is_ours(role.get("account", ""))):
        return f"{where} burns {amount} of our tokens in {role.get('account', '?')}"
    if effect is Effect.DELEGATES:
        delegate = role.get("delegate", "?")
        if (ours or ctx.is_ours(role.get("source", ""))) and not _may_delegate(delegate, ctx):
            return (
                f"{where} delegates {amount} of our tokens to {delegate}, which is not our "
                "wallet nor an account of ours that no key can sign for"
            )
    if effect is Effect.REAUTHORISES:
        account, new = role.get("account", "?"), fields.get("new_authority", "?")
        kind = fields.get("authority_type", "?")
        return f"{where} hands the {kind} authority over {account} to {new}"
    account = role.get("account", "")
    if effect is Effect.PAYS_RENT and role.get("payer") == ctx.wallet:
        if not ctx.is_ours(account):
            return f"{where} has our wallet pay rent for {role.get('account', 'an account')}"
        # growing a token account of ours parks rent beyond a token account's size where
        # its mint's freeze authority can lock it; no order grows one
        return (
            f"{where} has our wallet pay rent to grow our token account {account}: lamports "
            "parked in a token account can be frozen there by its mint's authority"
        )
    if effect in (Effect.FREEZES, Effect.MINTS) and ours:
        return f"{where} uses our wallet as a mint's authority: no order does that"
    if effect is Effect.EXTENSION and (ours or any(ctx.is_ours(a) for a in ix.accounts)):
        return f"{where} is a Token-2022 extension instruction on our accounts; jupcron signs none"
    return None


def token(summary: TxSummary, ctx: Context) -> list[str]:
    return [
        reason
        for ix in summary.instructions
        if ix.program in TOKEN_PROGRAMS and (reason := _token(ix, ctx))
    ]


def associated_token(summary: TxSummary, ctx: Context) -> list[str]:
    """Token accounts created at our cost are the wallet's or the plan's receiver's
    (of which mints: `rent.plan_mints`)."""
    reasons = []
    for ix in summary.instructions:
        if ix.program != ASSOCIATED_TOKEN:
            continue
        role, where = ix.role, f"instruction #{ix.index}: {ix.title}"
        if ix.malformed:
            reasons.append(f"{where}: the instruction is of an unknown kind")
        elif ix.name == "recover_nested":
            if role.get("wallet") != ctx.wallet and any(ctx.is_ours(a) for a in ix.accounts):
                reasons.append(f"{where} moves tokens of ours for another wallet")
        elif role.get("funder") == ctx.wallet:
            owner = role.get("wallet", "?")
            # the receiver (a deposit's vault) itself, never one of its token accounts
            named = {ctx.expect.receiver, ctx.expect.vault} if ctx.expect else set()
            if owner != ctx.wallet and not (owner in ctx.ours.receiver and owner in named):
                reasons.append(
                    f"{where} has our wallet pay the rent of a token account for {owner}, "
                    "which is not ours"
                )
            if (reason := _account_len(ix, where)) is not None:
                reasons.append(reason)
    return reasons


def _account_len(ix: Instruction, where: str) -> str | None:
    """`create_with_args` sizes the account it creates (its IDL's ``account_len``): at
    our cost, at most a token account's size, as every other way of making one."""
    size = dict(ix.fields).get("account_len")
    if size is None:
        return None
    largest = token_account_space(ix.role.get("token_program", ""))
    if largest is not None and size.isdigit() and int(size) <= largest:
        return None
    return (
        f"{where} has our wallet pay the rent of an account of {size} bytes; a token account "
        f"takes at most {largest or TOKEN_ACCOUNT_SPACE}: rent beyond that is parked where a "
        "mint's freeze authority can lock it"
    )
