"""Rent our wallet pays for new token accounts: with a plan, only for accounts of the
plan's mints, whichever program creates them.

Three instructions make a token account at our cost: System `create_account*` (the
account then initialised as ours), the ATA program's `create` and `create_idempotent`,
and the aggregator's `create_token_account`. Their own rules (`lamports`,
`token_rules`, `orders`) judge whose account it is and how much it takes; this one
holds what they share. A token account of a stranger's mint can be frozen by that
mint's authority, and the rent in it with it, so with a plan our rent pays only for
accounts of the plan's mints (a Trigger V2 vault's: of its input mint).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jupcron.txguard import vault
from jupcron.txguard.context import Context
from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.expect import Expectation
from jupcron.txguard.instructions import ASSOCIATED_TOKEN, SYSTEM
from jupcron.txguard.ours import AGGREGATOR, ata


@dataclass(frozen=True)
class Rented:
    """A token account our wallet pays the rent of, as far as the transaction names it."""

    where: str
    account: str
    owner: str
    mint: str | None  # None: no instruction of the transaction names it


def _named_mint(ix: Instruction, ctx: Context) -> str | None:
    """The mint of the account `ix` creates: the one it names, else the one the
    transaction initialises the account with, else the plan's mint whose associated
    address it is (a lookup table may stand in for the mint)."""
    mint = ix.role.get("mint", "")
    if not mint.startswith(("lookup:", "invalid-index:")):
        return mint
    account = ix.role.get("account", "")
    if account in ctx.ours.mint_of:
        return ctx.ours.mint_of[account]
    owner, program = ix.role.get("wallet", ""), ix.role.get("token_program", "")
    wanted = ctx.expect.mints if ctx.expect else ()
    return next((m for m in wanted if ata(owner, m, program) == account), None)


def rented(summary: TxSummary, ctx: Context) -> Iterator[Rented]:
    """The token accounts of ours (or of the plan's receiver) created at our cost.
    Rent for anyone else's account is refused by the creating instruction's own rule."""
    wallet, ours = ctx.wallet, ctx.ours
    for ix in summary.instructions:
        if ix.malformed:
            continue
        role, where = ix.role, f"instruction #{ix.index}: {ix.title}"
        if ix.program == SYSTEM and ix.name.startswith("create_account"):
            account = role.get("to", "")
            if role.get("from") == wallet and account in ours.created:
                yield Rented(where, account, wallet, ours.mint_of.get(account))
        elif ix.program == ASSOCIATED_TOKEN and ix.name != "recover_nested":
            owner = role.get("wallet", "")
            if role.get("funder") == wallet and (owner == wallet or owner in ours.receiver):
                yield Rented(where, role.get("account", ""), owner, _named_mint(ix, ctx))
        elif (
            ix.program == AGGREGATOR
            and ix.name == "create_token_account"
            and role.get("owner") == wallet  # another owner's: the Jupiter rule refuses it
        ):
            yield Rented(where, role.get("account", ""), wallet, _named_mint(ix, ctx))


def _wanted(rent: Rented, expect: Expectation, wallet: str) -> tuple[str | None, ...]:
    """The mints whose token accounts our rent may create for `rent`'s owner: ours,
    of the plan's mints; a vault's, of the input it is deposited; the receiver's, of
    the output it is paid (nothing of the input ever goes to it)."""
    if rent.owner == wallet:
        return expect.mints
    if expect.vault and rent.owner == expect.vault:
        return (expect.input_mint,)
    return (expect.output_mint,)


def plan_mints(summary: TxSummary, ctx: Context) -> list[str]:
    """With a plan, every token account created at our cost is of one of its mints; a
    vault's only of the input mint (those the deposit proves so need no name)."""
    expect = ctx.expect
    if expect is None:
        return []
    proven = vault.created_for_vault(summary, expect)
    reasons = []
    for rent in rented(summary, ctx):
        if rent.account in proven:
            continue
        wanted = _wanted(rent, expect, ctx.wallet)
        if rent.mint is None or rent.mint not in wanted:
            whose = "our" if rent.owner == ctx.wallet else f"{rent.owner}'s"
            reasons.append(
                f"{rent.where} has our wallet pay the rent of {whose} new token account "
                f"{rent.account} of {rent.mint or 'a mint the transaction does not name'}; "
                f"the plan's mints are {', '.join(m for m in wanted if m) or 'none'}"
            )
    return reasons
