"""The Jupiter instruction, held to the plan: what the order programs are told.

Every instruction of a Jupiter program must be decoded (what cannot be read
cannot be checked, so it is refused with the reason) and be of the kind the
plan asked for: a swap plan signs swaps, a recurring plan opens a recurring
order, a cancel plan cancels, and nothing else but helpers that keep our own
token accounts. The accounts that receive funds or authority must be ours: the
swap's destination (or the plan's named receiver's), the order's owner, where a
cancel refunds. The mints must be the plan's, and all the instructions together
may spend at most the plan's amount of its input mint, plus
`guard.amount_allowance_bps`.
"""

from __future__ import annotations

from daemon.txguard.context import Context
from daemon.txguard.decode import Instruction, TxSummary
from daemon.txguard.instructions import TOKEN_PROGRAMS
from daemon.txguard.jupiter import PROGRAMS, action_of
from daemon.txguard.ours import ata

BPS = 10_000
# the actions a plan kind may sign, besides "helper"
KIND_ACTIONS: dict[str, frozenset[str]] = {
    "swap": frozenset({"swap"}),
    "recurring": frozenset({"recurring_open"}),
    "trigger-cancel": frozenset({"trigger_cancel"}),
    # Trigger V2 signs no Jupiter program's instruction: a deposit into the vault and a
    # withdrawal out of it are plain token moves (daemon/txguard/vault.py holds them)
    "trigger-v2-dca": frozenset(),
    "trigger-v2-order": frozenset(),
    "trigger-v2-cancel": frozenset(),
}
SPENDING = frozenset({"swap", "recurring_open", "trigger_open"})


def _spends(ix: Instruction) -> int | None:
    """The most of the input this instruction can take: exact-in amount, or the
    exact-out bound; None when its data does not say (a token-ledger route)."""
    fields = dict(ix.fields)
    for key in ("in_amount", "max_in_amount"):
        if fields.get(key, "").isdigit():
            return int(fields[key])
    return None


def _token_accounts(owners: tuple[str, ...], mint: str) -> set[str]:
    return {a for o in owners for p in TOKEN_PROGRAMS if (a := ata(o, mint, p)) is not None}


def _accounts(ix: Instruction, ctx: Context, where: str) -> list[str]:
    role, reasons = ix.role, []
    owner = role.get("owner")
    if owner is not None and owner != ctx.wallet:
        reasons.append(f"{where} acts for {owner}, not for our wallet")
    destination = role.get("destination")
    if (
        destination is not None
        and destination not in ctx.ours.tokens
        and destination not in ctx.ours.receiver
    ):
        reasons.append(f"{where} pays out to {destination}, which is not ours")
    refund = role.get("refund_to")
    if refund is not None and not ctx.is_ours(refund):
        reasons.append(f"{where} refunds to {refund}, which is not ours")
    return reasons


def _against_plan(ix: Instruction, ctx: Context, where: str, action: str) -> list[str]:
    expect = ctx.expect
    if expect is None:
        return []
    role, reasons = ix.role, []
    allowed = KIND_ACTIONS.get(expect.kind, frozenset())
    if action not in allowed:
        said = action.replace("_", " ")
        return [f"{where} is a {said}, but the plan is a {expect.kind} plan"]
    sides = (
        ("input_mint", expect.input_mint, role.get("source"), (ctx.wallet,)),
        ("output_mint", expect.output_mint, role.get("destination"),
         (ctx.wallet, *([expect.receiver] if expect.receiver else []))),
    )  # fmt: skip
    for name, wanted, account, owners in sides:
        got = role.get(name)
        if not wanted or not got:
            continue
        said = name.replace("_", " ")
        if not got.startswith("lookup:"):
            if got != wanted:
                reasons.append(f"{where} names {got} as its {said}; the plan: {wanted}")
        elif account not in _token_accounts(owners, wanted):
            # the mint comes from a lookup table; the token account shows which it is
            reasons.append(
                f"{where} loads its {said} from a lookup table and its account {account} "
                f"is not one for {wanted}: cannot tell what it trades"
            )
    if expect.order and role.get("order") and role["order"] != expect.order:
        reasons.append(f"{where} is for order {role['order']}; the plan names {expect.order}")
    return reasons


def jupiter(summary: TxSummary, ctx: Context) -> list[str]:
    reasons: list[str] = []
    spent, main, unbounded = 0, 0, False
    for ix in summary.instructions:
        if ix.program not in PROGRAMS:
            continue
        where = f"instruction #{ix.index}: {ix.title}"
        if ix.malformed:
            reasons.append(f"{where}: its data does not fit the program's interface")
            continue
        action = action_of(ix.program, ix.name)
        if action == "unknown":
            why = dict(ix.fields).get("cannot_decode", "not an instruction jupcron knows")
            reasons.append(f"{where} cannot be decoded ({why}): what it moves cannot be checked")
            continue
        reasons += _accounts(ix, ctx, where)
        if action == "helper":
            continue
        reasons += _against_plan(ix, ctx, where, action)
        main += 1
        if action in SPENDING:
            amount = _spends(ix)
            if amount is None:
                unbounded = True
                reasons.append(
                    f"{where}: its input amount is not in its data, so it cannot be bounded"
                )
            else:
                spent += amount
    expect = ctx.expect
    if expect is None:
        return reasons
    if main == 0 and KIND_ACTIONS.get(expect.kind, frozenset({"?"})):
        reasons.append(f"no Jupiter instruction of the kind the plan asked for ({expect.kind})")
    limit = expect.amount
    if limit is not None and not unbounded:
        allowance = ctx.policy.amount_allowance_bps
        ceiling = limit * (BPS + allowance) // BPS
        if spent > ceiling:
            reasons.append(
                f"the Jupiter instructions spend {spent} of {expect.input_mint} in all, more "
                f"than the {limit} the plan ordered (allowance {allowance} bps)"
            )
    return reasons
