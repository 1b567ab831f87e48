"""The Jupiter instruction, held to the plan: what the order programs are told.

Every instruction of a Jupiter program must be decoded (what cannot be read
cannot be checked, so it is refused with the reason) and be of the kind the
plan asked for: a swap plan signs swaps (an aggregator route or a JupiterZ
fill), a recurring plan opens a recurring order, a cancel plan cancels, and
nothing else but helpers that keep our own token accounts. Held to the plan's
whole terms:

- accounts: the order acts for our wallet; the input leaves our own token
  account *of the plan's input mint* (a v1 route names no input mint, so the
  account is the proof); the output lands in ours or the plan's receiver's, of
  the plan's output mint; a cancel refunds to us;
- a swap's slippage, platform fee and fee account, and its guaranteed minimum
  against the order answer's ``outAmount`` (`jupcron.txguard.swap_terms`);
- a recurring plan opens a new order (never a ``deposit`` into one that exists)
  with the plan's deposit, per-cycle amount, cycle and start, and bounds its
  price where (and only where) the plan does;
- all the instructions together spend at most the plan's amount of its input
  mint (plus `guard.amount_allowance_bps`), and guarantee at least the plan's
  minimum out (`limits`) and no worse than the independent reference allows.
"""

from __future__ import annotations

from decimal import Decimal

from jupcron.txguard import swap_terms
from jupcron.txguard.context import Context
from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.expect import Expectation, RecurringTerms
from jupcron.txguard.instructions import TOKEN_PROGRAMS, WRAPPED_SOL
from jupcron.txguard.jupiter import DCA, PROGRAMS, action_of
from jupcron.txguard.jupiter_orders import RECURRING_CANCEL, RECURRING_NEW, dca_order
from jupcron.txguard.ours import ata

# the actions a plan kind may sign, besides "helper"
KIND_ACTIONS: dict[str, frozenset[str]] = {
    "swap": frozenset({"swap"}),
    "recurring": frozenset({"recurring_open"}),
    "recurring-cancel": frozenset({"recurring_close"}),
    "trigger-cancel": frozenset({"trigger_cancel"}),
    "trigger-cancel-batch": frozenset({"trigger_cancel"}),
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
    for key in ("in_amount", "max_in_amount"):
        if (amount := swap_terms.number(ix, key)) is not None:
            return amount
    return None


def _plain(mint: str | None) -> bool:
    return bool(mint) and not str(mint).startswith(("lookup:", "invalid-index:"))


def _accounts(ix: Instruction, ctx: Context, where: str) -> list[str]:
    role, reasons = ix.role, []
    owner = role.get("owner")
    if owner is not None and owner != ctx.wallet:
        reasons.append(f"{where} acts for {owner}, not for our wallet")
    source = role.get("source")
    swap = action_of(ix.program, ix.name) == "swap"
    if swap and source is not None and source != ctx.wallet and not ctx.is_ours(source):
        reasons.append(f"{where} spends from {source}, which is not ours")
    destination = role.get("destination")
    if (
        destination is not None
        and destination != ctx.wallet
        and destination not in ctx.ours.tokens
        and destination not in ctx.ours.receiver
    ):
        reasons.append(f"{where} pays out to {destination}, which is not ours")
    refund = role.get("refund_to")
    if refund is not None and not ctx.is_ours(refund):
        reasons.append(f"{where} refunds to {refund}, which is not ours")
    return reasons


def _side(ix: Instruction, ctx: Context, where: str, expect: Expectation, side: str) -> list[str]:
    """One side of an order held to the plan's mint: the mint the instruction names,
    else (a lookup table, or a v1 route that names none) the token account's."""
    wanted = expect.input_mint if side == "input" else expect.output_mint
    if not wanted:
        return []
    got = ix.role.get(f"{side}_mint")
    said = f"{side} mint"
    if _plain(got) and got != wanted:
        return [f"{where} names {got} as its {said}; the plan: {wanted}"]
    account = ix.role.get("source" if side == "input" else "destination")
    if account is None:
        return []
    if side == "output" and expect.receiver and expect.receiver != ctx.wallet:
        return _to_receiver(account, ctx, where, expect.receiver, wanted)
    if account == ctx.wallet and wanted == WRAPPED_SOL:
        return []  # native SOL, straight to or from the wallet (a JupiterZ fill)
    if ctx.ours.holds(account, wanted):
        return []
    return [
        f"{where} takes its {side} {'from' if side == 'input' else 'to'} {account}, which is "
        f"not {'our' if side == 'input' else 'a'} token account of the plan's {said} {wanted}"
    ]


def _to_receiver(account: str, ctx: Context, where: str, receiver: str, mint: str) -> list[str]:
    """A plan that names a receiver pays its output to that receiver: its token account
    of the plan's output mint, or the receiver itself for native SOL. Output kept in an
    account of ours is the receiver never paid, however safe it is for us."""
    if (account == receiver and mint == WRAPPED_SOL) or _receivers(account, ctx, mint):
        return []
    return [
        f"{where} pays its output to {account}, not to the plan's receiver {receiver} "
        f"(its token account of {mint})"
    ]


def _order_output(
    ix: Instruction, ctx: Context, where: str, expect: Expectation, action: str
) -> list[str]:
    """An order's output mint held to the plan's. A recurring order buys the mint its
    `output_mint` account names; named from a lookup table, it can be shown the plan's
    only by the order's own address, the DCA account being the PDA of its user and
    mints (`dca_order`), which the program checks as it opens the order."""
    got, wanted = ix.role.get("output_mint"), expect.output_mint
    if got is None or not wanted:
        return []
    if _plain(got):
        if got == wanted:
            return []
        return [f"{where} names {got} as its output mint; the plan: {wanted}"]
    if action != "recurring_open":
        return []  # a cancel's mints: `_closed_pair`
    index = swap_terms.number(ix, "application_idx")
    if expect.input_mint and index is not None:
        order = dca_order(ctx.wallet, expect.input_mint, wanted, index)
        if order is not None and ix.role.get("order") == order:
            return []
    return [
        f"{where} names its output mint from a lookup table ({got}), and its order "
        f"{ix.role.get('order', '(none named)')} is not the DCA account of the plan's "
        f"mints: it cannot be shown to buy the plan's {wanted}"
    ]


def _closed_pair(ix: Instruction, where: str, expect: Expectation, action: str) -> list[str]:
    """A cancel of a plan that names a pair, not an order: the order closed is the one
    the API's order list called the pair's, and only the mints the close names show it
    is (the DCA program checks them against the order). A mint named from a lookup
    table (which the guard cannot read) shows nothing: the close could be of another
    order of ours, one the plan never named, so it is refused. Genuine closes name
    their mints in the message (tests/fixtures/real)."""
    if action != "recurring_close":
        return []
    reasons = []
    for side, wanted in (("input", expect.input_mint), ("output", expect.output_mint)):
        got = ix.role.get(f"{side}_mint")
        if wanted and got is not None and not _plain(got):
            reasons.append(
                f"{where} names its {side} mint from a lookup table ({got}): it cannot be "
                f"shown to close an order of the plan's pair, whose {side} mint is {wanted}"
            )
    return reasons


def _receivers(account: str, ctx: Context, mint: str) -> bool:
    receiver = ctx.expect.receiver if ctx.expect else None
    return bool(receiver) and any(ata(receiver or "", mint, p) == account for p in TOKEN_PROGRAMS)


def _recurring_terms(ix: Instruction, where: str, expect: Expectation) -> list[str]:
    if expect.recurring_by_price and ix.program == DCA:
        # the DCA program orders by time: its cadence, per-cycle amount and price bounds
        # would be the answer's alone, none of them the plan's (loaded with a warning
        # that such a plan's runs are rejected: the Value Average program's interface
        # is not public)
        return [
            f"{where} is a time-based DCA order, but the plan is price-based "
            "(params.price): its cadence and amounts would be none of the plan's"
        ]
    if expect.kind == "recurring" and ix.name not in RECURRING_NEW:
        # createOrder opens a new order (open_dca_v2); an order that exists already has
        # terms the plan never set, and a deposit into it would fund them
        order = ix.role.get("order", "(none named)")
        return [
            f"{where} adds funds to order {order}, an order that exists already: a "
            "recurring plan only opens a new order with its own terms"
        ]
    if expect.kind == "recurring-cancel" and ix.name not in RECURRING_CANCEL:
        return [
            f"{where} is no close_dca: it leaves the order open (and spending), and the plan "
            "cancels it"
        ]
    terms = expect.recurring
    if terms is None:
        return []
    reasons = []
    fields = dict(ix.fields)
    checks = (
        ("in_amount", terms.in_amount, "deposit"),
        ("in_amount_per_cycle", terms.per_cycle, "amount per cycle"),
        ("cycle_frequency", terms.cycle_seconds, "cycle (seconds)"),
    )
    for key, wanted, what in checks:
        got = fields.get(key, "?")
        if got != str(wanted):
            reasons.append(f"{where} has a {what} of {got}; the plan: {wanted}")
    start = fields.get("start_at", "none")
    wanted_start = "none" if terms.start_at is None else str(terms.start_at)
    if start != wanted_start:
        reasons.append(f"{where} starts at {start}; the plan: {wanted_start}")
    return reasons + _price_bounds(fields, where, terms)


_BOUNDS = ("min_out_amount", "max_out_amount")
# the price each bound answers, a price being input paid per unit of output: Jupiter's
# DCA SDK example (minOutAmountPerCycle "effectively allows for a max price",
# maxOutAmountPerCycle "for a min price") and its DCA integration guide (buy SOL with
# USDC only below $20: at least 100 / 20 SOL out of each 100 USDC)
_ANSWERS = {"min_out_amount": "maxPrice", "max_out_amount": "minPrice"}
_F64 = Decimal("1e-9")  # the API takes prices as doubles: far above their rounding


def _price_bounds(fields: dict[str, str], where: str, terms: RecurringTerms) -> list[str]:
    """A DCA's per-cycle output bounds, held to the plan's minPrice / maxPrice.

    - ``Some(0)`` is refused: the order account keeps each bound as a plain u64 with
      0 for "none" (the API lists an unbounded order's as "0"), so it bounds
      nothing while looking like a bound (a genuine answer writes None);
    - each bound answers its price (`_ANSWERS`), present exactly where the plan
      sets that price: a bound on the other side caps what the order buys instead
      of protecting it;
    - a least output above the most output can never fill: the deposit would sit
      in the order, the run recorded as done while nothing is ever bought;
    - with both, most / least out is maxPrice / minPrice, whatever the units of a
      price and the mints' decimals (undocumented by Jupiter): bounds widened or
      narrowed away from the plan's are refused. A single bound's value depends
      on those units, so only `limits` holds it (docs/price-protection.md).
    """
    given = {k: fields.get(k, "none") for k in _BOUNDS if fields.get(k, "none") != "none"}
    reasons = [
        f"{where} has a {k} of 0, which bounds nothing (the order keeps 0 as no bound)"
        for k, v in given.items()
        if v == "0"
    ]
    prices = {"minPrice": terms.min_price, "maxPrice": terms.max_price}
    if len(given) != terms.price_bounds:
        reasons.append(
            f"{where} bounds the price of each cycle {len(given)} way(s); the plan sets "
            f"{terms.price_bounds} of minPrice / maxPrice"
        )
    else:
        reasons += [
            f"{where} {'has' if k in given else 'has no'} {k} (a {price}); the plan "
            f"{'sets no' if prices[price] is None else 'sets'} {price}"
            for k, price in _ANSWERS.items()
            if (k in given) != (prices[price] is not None)
        ]
    least, most = (given.get(k, "") for k in _BOUNDS)
    if not (least.isdigit() and most.isdigit()):
        return reasons
    if int(least) > int(most):
        never = f"asks for at least {least} out per cycle and at most {most}: it can never fill"
        reasons.append(f"{where} {never}")
    low, high = terms.min_price, terms.max_price
    if low is not None and high is not None and int(least) > 0:
        # each bound rounded to a base unit: |most * low - least * high| <= low + high
        gap = abs(int(most) * low - int(least) * high)
        if gap > low + high + int(most) * low * _F64:
            reasons.append(
                f"{where} bounds each cycle to {least}..{most} out, a range of "
                f"{Decimal(most) / Decimal(least):.6g}; the plan's maxPrice / minPrice "
                f"is {high / low:.6g}"
            )
    return reasons


def _against_plan(ix: Instruction, ctx: Context, where: str, action: str) -> list[str]:
    expect = ctx.expect
    if expect is None:
        return []
    allowed = KIND_ACTIONS.get(expect.kind, frozenset())
    if action not in allowed:
        said = action.replace("_", " ")
        return [f"{where} is a {said}, but the plan is a {expect.kind} plan"]
    reasons = _side(ix, ctx, where, expect, "input")
    if action == "swap":
        reasons += _side(ix, ctx, where, expect, "output")
        reasons += swap_terms.terms(ix, ctx, where, expect)
    else:
        reasons += _order_output(ix, ctx, where, expect, action)
        reasons += _closed_pair(ix, where, expect, action)
    reasons += _recurring_terms(ix, where, expect)
    if expect.order and ix.role.get("order") != expect.order:
        # an instruction that names no order account cannot be shown to be the plan's
        reasons.append(
            f"{where} is for order {ix.role.get('order', '(none named)')}; "
            f"the plan names {expect.order}"
        )
    if expect.orders and ix.role.get("order") not in expect.orders:
        named = ", ".join(expect.orders)
        reasons.append(f"{where} is for order {ix.role.get('order')}; the plan names {named}")
    return reasons


_PROTECTED = frozenset({"swap", "recurring_open"})  # what price protection holds to a floor


def _guaranteed(summary: TxSummary, ctx: Context, expect: Expectation) -> list[str]:
    """What the order guarantees at least, held to the plan's limit and to the
    independent reference (docs/price-protection.md)."""
    if expect.price_problem:
        return [f"price protection cannot vouch for this run: {expect.price_problem}"]
    if expect.min_out is None and expect.reference_out is None:
        return []
    found = swap_terms.guaranteed(summary, _PROTECTED)
    if (ix := found.unreadable) is not None:
        return [
            f"instruction #{ix.index}: {ix.title} guarantees no least output that can be "
            "read, and the plan's price protection needs one"
        ]
    if not found.seen:
        return []
    total = found.total
    reasons = []
    if expect.min_out is not None and total < expect.min_out:
        reasons.append(
            f"the order guarantees only {total} of {expect.output_mint}, below the plan's "
            f"limit of {expect.min_out} (limits)"
        )
    if expect.reference_out is not None:
        deviation = expect.max_deviation_bps or 0
        floor = -(-expect.reference_out * (swap_terms.BPS - deviation) // swap_terms.BPS)
        if total < floor:
            reasons.append(
                f"the order guarantees only {total} of {expect.output_mint}, more than "
                f"{deviation} bps below the {expect.reference_out} an independent price "
                "implies (guard.max_price_deviation_bps)"
            )
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
        ceiling = limit * (swap_terms.BPS + allowance) // swap_terms.BPS
        if spent > ceiling:
            reasons.append(
                f"the Jupiter instructions spend {spent} of {expect.input_mint} in all, more "
                f"than the {limit} the plan ordered (allowance {allowance} bps)"
            )
    reasons += swap_terms.quote_held(summary, ctx, expect)
    reasons += _guaranteed(summary, ctx, expect)
    return reasons
