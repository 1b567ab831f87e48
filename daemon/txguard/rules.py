"""The refusal rules. Each rule looks at the decoded summary and returns the
reasons it refuses, worded so an operator knows what was wrong and what to do.

The principle: nothing of value leaves the wallet's accounts for an account
that is not ours (see `ours`), whatever program or instruction form moves it.
Token instructions are judged by their effect (`token.Effect`), System ones by
the lamports they move, the ATA program by whose account our rent creates.
"""

from __future__ import annotations

from collections.abc import Callable

from jupcron.txguard import vault
from jupcron.txguard.context import Context
from jupcron.txguard.decode import MAX_TX_BYTES, ComputeBudget, Instruction, TxSummary
from jupcron.txguard.instructions import (
    ASSOCIATED_TOKEN,
    COMPUTE_BUDGET,
    NONCE_INSTRUCTIONS,
    SYSTEM,
    TOKEN_PROGRAMS,
    WRAPPED_SOL,
)
from jupcron.txguard.jupiter import AGGREGATOR, ORDER_ENGINE
from jupcron.txguard.orders import jupiter
from jupcron.txguard.ours import TOKEN_ACCOUNT_RENT, ata, rent_exempt
from jupcron.txguard.token import Effect

Rule = Callable[[TxSummary, Context], list[str]]


def sanitized(summary: TxSummary, ctx: Context) -> list[str]:
    if summary.sanitize_error is None:
        return []
    return [f"the message is malformed and fails to sanitize ({summary.sanitize_error})"]


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


def programs(summary: TxSummary, ctx: Context) -> list[str]:
    return [
        f"instruction #{ix.index} calls program {ix.program}, which is not in the allow-list "
        "(add it to guard.extra_programs only if you trust it)"
        for ix in summary.instructions
        if ix.program not in ctx.policy.programs
    ]


_LAMPORT_MOVES = {
    # name -> (role that pays, role that receives); the paying role holds the wallet
    # itself, or for transfer_with_seed the base that the paying address derives from
    "transfer": ("from", "to"),
    "transfer_with_seed": ("base", "to"),
    "create_account": ("from", "to"),
    "create_account_with_seed": ("from", "to"),
    "create_account_allow_prefund": ("from", "to"),
}


def _rent(ix: Instruction, ctx: Context, to: str, amount: str) -> str | None:
    """Our lamports for an account being created: only for an account the
    transaction makes ours, and only its exact rent, unless it is one of our
    wrapped-SOL accounts (whose lamports stay ours: `wraps` bounds them)."""
    where = f"instruction #{ix.index}: System {ix.name}"
    if to not in ctx.ours.created:
        return f"{where} pays {amount} lamports of rent from our wallet for {to}, which is not ours"
    space = dict(ix.fields).get("space", "")
    if not amount.isdigit() or not space.isdigit():
        return f"{where} moves an amount of lamports that cannot be read"
    if ctx.ours.takes_lamports(to) or int(amount) <= rent_exempt(int(space)):
        return None
    return (
        f"{where} puts {amount} lamports into our new account {to}, more than the "
        f"{rent_exempt(int(space))} of its rent: lamports parked in a token account of a "
        "mint someone else controls can be frozen there"
    )


def _system(ix: Instruction, ctx: Context) -> str | None:
    role, fields = ix.role, dict(ix.fields)
    where = f"instruction #{ix.index}: System {ix.name}"
    touches = ctx.wallet in ix.accounts or ctx.wallet in fields.values()
    if ix.name in _LAMPORT_MOVES:
        paying, receiving = _LAMPORT_MOVES[ix.name]
        to = role.get(receiving, "?")
        if ix.name.startswith("create_account") and to == ctx.wallet:
            return f"{where} would make our wallet a new account owned by {fields.get('owner')}"
        if role.get(paying) != ctx.wallet:
            return None
        amount = fields.get("lamports", "?")
        if ix.name.startswith("create_account"):
            return _rent(ix, ctx, to, amount)
        if not ctx.ours.takes_lamports(to):
            why = ""
            if ctx.is_ours(to):
                why = (
                    " (a token account of ours that is not a wrapped-SOL account: lamports "
                    "parked there can be frozen by its mint's authority, or it cannot exist)"
                )
            return (
                f"{where} moves {amount} lamports from our wallet to {to}, which is not ours{why}"
            )
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


def wraps(summary: TxSummary, ctx: Context) -> list[str]:
    """Lamports wrapped into our wrapped-SOL accounts are the swap's (or order's)
    input in another form: with a plan, they are native SOL only when the plan
    spends SOL, and all of them together are at most the plan's amount plus the
    rent of the wrapped-SOL accounts the transaction creates."""
    expect = ctx.expect
    if expect is None or expect.kind in vault.KINDS:
        return []
    wrapped = 0
    for ix in summary.instructions:
        if ix.program != SYSTEM or ix.name not in _LAMPORT_MOVES:
            continue
        paying, receiving = _LAMPORT_MOVES[ix.name]
        to, amount = ix.role.get(receiving, ""), dict(ix.fields).get("lamports", "")
        if ix.role.get(paying) != ctx.wallet or to == ctx.wallet or not ctx.ours.takes_lamports(to):
            continue
        wrapped += int(amount) if amount.isdigit() else 0
    created = sum(1 for a in ctx.ours.created if ctx.ours.holds(a, WRAPPED_SOL))
    if wrapped == 0:
        return []
    if expect.input_mint != WRAPPED_SOL:
        return [
            f"the transaction wraps {wrapped} lamports of ours into wrapped SOL, but the plan "
            f"spends {expect.input_mint}, not SOL"
        ]
    ceiling = (expect.amount or 0) + created * TOKEN_ACCOUNT_RENT
    if expect.amount is not None and wrapped > ceiling:
        return [
            f"the transaction wraps {wrapped} lamports of ours, more than the plan's "
            f"{expect.amount} plus the rent of the {created} wrapped-SOL account(s) it creates"
        ]
    return []


def durable_nonce(summary: TxSummary, ctx: Context) -> list[str]:
    if not summary.uses_durable_nonce:
        return []
    return ["the transaction uses a durable nonce: it would never expire"]


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
        if (ours or ctx.is_ours(role.get("source", ""))) and not ctx.is_ours(delegate):
            return f"{where} delegates {amount} of our tokens to {delegate}, which is not ours"
    if effect is Effect.REAUTHORISES:
        account, new = role.get("account", "?"), fields.get("new_authority", "?")
        kind = fields.get("authority_type", "?")
        return f"{where} hands the {kind} authority over {account} to {new}"
    account = role.get("account", "")
    if effect is Effect.PAYS_RENT and role.get("payer") == ctx.wallet and not ctx.is_ours(account):
        return f"{where} has our wallet pay rent for {role.get('account', 'an account')}"
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


def _rent_mint(ix: Instruction, ctx: Context) -> str | None:
    """The mint of a token account our rent creates, where it can be named."""
    mint = ix.role.get("mint", "")
    if not mint.startswith(("lookup:", "invalid-index:")):
        return mint
    account = ix.role.get("account", "")
    if account in ctx.ours.mint_of:
        return ctx.ours.mint_of[account]
    owner, program = ix.role.get("wallet", ""), ix.role.get("token_program", "")
    wanted = ctx.expect.mints if ctx.expect else ()
    return next((m for m in wanted if ata(owner, m, program) == account), None)


def associated_token(summary: TxSummary, ctx: Context) -> list[str]:
    """Token accounts created at our cost are the wallet's, or the plan's receiver's,
    and with a plan only for the plan's mints (its vault's: only the input mint)."""
    reasons = []
    expect = ctx.expect
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
            if owner != ctx.wallet and owner not in ctx.ours.receiver:
                reasons.append(
                    f"{where} has our wallet pay the rent of a token account for {owner}, "
                    "which is not ours"
                )
                continue
            if expect is None:
                continue
            mint = _rent_mint(ix, ctx)
            wanted = (
                (expect.input_mint,) if expect.vault and owner == expect.vault else expect.mints
            )
            if mint is None or mint not in wanted:
                said = mint or "a mint a lookup table names"
                reasons.append(
                    f"{where} has our wallet pay the rent of a token account of {said} for "
                    f"{owner}; the plan's mints are {', '.join(m for m in wanted if m) or 'none'}"
                )
    return reasons


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
    wallet pays it; compute-budget instructions the runtime would refuse are refused."""
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
    if budget.total_fee_lamports > policy.max_fee_lamports:
        reasons.append(
            f"our wallet would pay a fee of {budget.total_fee_lamports} lamports "
            f"({_fee_text(budget)}), above the cap of {policy.max_fee_lamports} lamports "
            "(guard.max_fee_lamports)"
        )
    return reasons


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
    jupiter,
    trigger_v2,
    fee,
)


def evaluate(summary: TxSummary, ctx: Context) -> list[str]:
    reasons: list[str] = []
    for rule in RULES:
        reasons += rule(summary, ctx)
    return reasons
