"""System instructions judged by the lamports they move: from our wallet only to us,
our wrapped-SOL accounts, or as the exact rent of a token account the transaction makes
ours (of a token account's size; of the plan's mints: `rent`); and wrapping
bounded by the plan's amount."""

from __future__ import annotations

from jupcron.txguard import vault
from jupcron.txguard.context import Context
from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.instructions import (
    NONCE_INSTRUCTIONS,
    SYSTEM,
    WRAPPED_SOL,
)
from jupcron.txguard.ours import TOKEN_ACCOUNT_RENT, rent_exempt, token_account_space

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
    """Our lamports for an account being created: only for a token account the
    transaction makes ours, of a token account's size (`token_account_space`; of which
    mints: `rent.plan_mints`), and only its exact rent, unless it is one of our
    wrapped-SOL accounts (whose lamports stay ours: `wraps` bounds them)."""
    where = f"instruction #{ix.index}: System {ix.name}"
    if to not in ctx.ours.created:
        return f"{where} pays {amount} lamports of rent from our wallet for {to}, which is not ours"
    fields = dict(ix.fields)
    space, program = fields.get("space", ""), fields.get("owner", "")
    if not amount.isdigit() or not space.isdigit():
        return f"{where} moves an amount of lamports that cannot be read"
    largest = token_account_space(program)
    if largest is None:
        return f"{where} has our wallet create {to} for {program}, which is not a token program"
    if int(space) > largest:
        return (
            f"{where} has our wallet pay the rent of {to} at {space} bytes; a token account "
            f"takes at most {largest}: rent beyond that is parked where a mint's freeze "
            "authority can lock it"
        )
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
    rent of the wrapped-SOL accounts the transaction creates. A Trigger V2 deposit's
    lamports into the vault's accounts are its deposit, held by `vault.trigger_v2`;
    wrapping into our own accounts is held here as for any plan."""
    expect = ctx.expect
    if expect is None:
        return []
    custody = vault.deposit_accounts(summary, expect)
    wrapped = 0
    for ix in summary.instructions:
        if ix.program != SYSTEM or ix.name not in _LAMPORT_MOVES:
            continue
        paying, receiving = _LAMPORT_MOVES[ix.name]
        to, amount = ix.role.get(receiving, ""), dict(ix.fields).get("lamports", "")
        if ix.role.get(paying) != ctx.wallet or to == ctx.wallet or not ctx.ours.takes_lamports(to):
            continue
        if to in custody:
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
    if expect.amount is None:
        # a cancel spends nothing: its pair's SOL is no amount to wrap
        return [
            f"the transaction wraps {wrapped} lamports of ours into wrapped SOL, but the "
            f"{expect.kind} plan spends nothing"
        ]
    ceiling = expect.amount + created * TOKEN_ACCOUNT_RENT
    if wrapped > ceiling:
        return [
            f"the transaction wraps {wrapped} lamports of ours, more than the plan's "
            f"{expect.amount} plus the rent of the {created} wrapped-SOL account(s) it creates"
        ]
    return []
