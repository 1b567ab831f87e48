"""Who pays and who receives: the value each instruction moves, as far as its
decoded form says, and the net effect on our wallet where it can be computed.

For people (`jupcron tx inspect`) and the run's events; the rules judge the
same instructions independently. A program call that is not decoded moves
value we cannot see: it is listed as such, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.instructions import ASSOCIATED_TOKEN, SYSTEM, TOKEN_PROGRAMS
from jupcron.txguard.ours import Ours
from jupcron.txguard.token import Effect

TOKEN_ACCOUNT_RENT = 2_039_280  # a 165-byte token account's rent-exempt minimum


@dataclass(frozen=True)
class Flow:
    index: int  # the instruction, 1-based
    what: str  # "lamports", "tokens" or "rent"; "delegation", "burn"
    amount: str  # base units, or "all" / "?"
    payer: str
    receiver: str
    mint: str | None = None


@dataclass(frozen=True)
class NetEffect:
    """What our wallet gives up for certain, and what cannot be known statically."""

    fee_lamports: int
    lamports_out: int  # to accounts that are not ours
    rent_to_our_accounts: int  # lamports parked in our own new accounts (still ours)
    tokens_out: dict[str, int] = field(default_factory=dict)  # source account -> amount
    unknown: tuple[str, ...] = ()  # what moves value we cannot measure


def _system(ix: Instruction) -> Flow | None:
    role, fields = ix.role, dict(ix.fields)
    amount = fields.get("lamports", "?")
    if ix.name in ("transfer", "transfer_with_seed"):
        return Flow(ix.index, "lamports", amount, role.get("from", "?"), role.get("to", "?"))
    if ix.name.startswith("create_account"):
        return Flow(ix.index, "rent", amount, role.get("from", "?"), role.get("to", "?"))
    if ix.name == "withdraw_nonce_account":
        return Flow(ix.index, "lamports", amount, role.get("nonce", "?"), role.get("to", "?"))
    return None


def _token(ix: Instruction) -> Flow | None:
    role, fields = ix.role, dict(ix.fields)
    amount, mint = fields.get("amount", "?"), role.get("mint")
    effect = ix.effect
    if effect == Effect.MOVES:
        return Flow(ix.index, "tokens", amount, role.get("source", "?"),
                    role.get("destination", "?"), mint)  # fmt: skip
    if effect == Effect.BURNS:
        return Flow(ix.index, "burn", amount, role.get("account", "?"), "(burned)", mint)
    if effect == Effect.DELEGATES:
        return Flow(ix.index, "delegation", amount, role.get("source", "?"),
                    role.get("delegate", "?"), mint)  # fmt: skip
    if effect in (Effect.CLOSES, Effect.WITHDRAWS):
        source = role.get("account") or role.get("source") or role.get("mint") or "?"
        return Flow(ix.index, "lamports", "all", source, role.get("destination", "?"))
    return None


def of(ix: Instruction) -> Flow | None:
    """The value one instruction moves, if its decoded form says."""
    if ix.program == SYSTEM:
        return _system(ix)
    if ix.program in TOKEN_PROGRAMS:
        return _token(ix)
    if ix.program == ASSOCIATED_TOKEN and ix.name in ("create", "create_idempotent"):
        role = ix.role
        return Flow(ix.index, "rent", str(TOKEN_ACCOUNT_RENT), role.get("funder", "?"),
                    role.get("account", "?"))  # fmt: skip
    return None


def net_effect(summary: TxSummary, ours: Ours, opaque: tuple[int, ...] = ()) -> NetEffect:
    """Our wallet's certain costs; `opaque`: instructions that may move our value
    in ways their decoded form does not show (program calls)."""
    fee = summary.compute_budget.total_fee_lamports if summary.fee_payer == ours.wallet else 0
    lamports_out = rent_ours = 0
    tokens_out: dict[str, int] = {}
    unknown: list[str] = [f"instruction #{n}: a program call; its inner transfers are not shown"
                          for n in opaque]  # fmt: skip
    for ix in summary.instructions:
        flow = of(ix)
        if flow is None or not ours.has(flow.payer):
            continue
        amount = int(flow.amount) if flow.amount.isdigit() else None
        if flow.what in ("lamports", "rent"):
            if amount is None:
                unknown.append(f"instruction #{ix.index}: {flow.amount} lamports of {flow.payer}")
            elif ours.takes_lamports(flow.receiver) or flow.receiver in ours.created:
                rent_ours += amount if flow.what == "rent" else 0
            else:
                lamports_out += amount
        elif flow.what in ("tokens", "burn") and flow.receiver not in ours.tokens:
            if amount is None:
                unknown.append(f"instruction #{ix.index}: tokens of {flow.payer}")
            else:
                tokens_out[flow.payer] = tokens_out.get(flow.payer, 0) + amount
    return NetEffect(fee, lamports_out, rent_ours, tokens_out, tuple(unknown))
