"""What the plan asked for: the guard holds a transaction to it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class RecurringTerms:
    """A recurring (DCA) order as the plan states it: the total deposit, the amount
    each cycle swaps (inAmount / numberOfOrders, as the API divides it), the cycle
    in seconds, the plan's price bounds (minPrice / maxPrice, None: not set), and
    the start (None: now)."""

    in_amount: int
    per_cycle: int
    cycle_seconds: int
    min_price: Decimal | None = None
    max_price: Decimal | None = None
    start_at: int | None = None

    @property
    def price_bounds(self) -> int:
        """How many of minPrice / maxPrice the plan sets."""
        return (self.min_price is not None) + (self.max_price is not None)


@dataclass(frozen=True)
class Expectation:
    """The run's order, as the plan states it (and what the order call said of it).

    ``amount``: the most of ``input_mint`` the order may spend, in base units (a
    swap's ``amount``, a recurring order's total ``inAmount``); ``order``: the
    order account a trigger cancel may close; ``receiver``: a swap's documented
    receiver of the output, the one owner besides our wallet whose token account
    our rent may create. Trigger V2 (`jupcron.txguard.vault`): ``vault``, the
    wallet's vault as ``GET /vault`` named it; ``deposit``, what the deposit craft
    said it is: (receiverAddress, mint, amount).

    Terms of a swap: ``slippage_bps``, the plan's ``slippageBps`` (None: the
    guard's `max_slippage_bps`); ``referral_fee_bps``, the plan's ``referralFee``
    when it names a referral account (the only platform fee it asks for, besides
    Jupiter's own) and ``referral_account``, that account (where such a fee may
    go: it or its referral token accounts); ``fee_bps``, the platform fee the order
    answer declared (``feeBps``), which the transaction may not exceed;
    ``quoted_out``, the answer's ``outAmount``: the swap's guaranteed minimum is
    held to it less the plan's slippage (`jupcron.txguard.swap_terms`).
    ``priority_fee_lamports``: the plan's ``priorityFeeLamports`` where its order was
    sent it (Swap V2's; with ``broadcastFeeType`` maxCap or exactFee the fee is at
    most that), the most of priority fee our wallet may pay (`jupcron.txguard.rules.fee`;
    None: only the guard's `max_priority_fee_lamports`).
    ``recurring``: a recurring order's terms; ``recurring_by_price``: the plan is a
    price-based recurring order (``params.price``, Value Average), which no DCA order
    (time-based: `recurring` terms the plan never set) serves. Price protection
    (docs/price-protection.md): ``min_out``, the least of ``output_mint`` the run may
    receive (the plan's limit), ``reference_out`` what an independent price says the
    input is worth, with ``max_deviation_bps``.
    """

    kind: str  # "swap" | "recurring" | "trigger-cancel" | "trigger-v2-…"
    input_mint: str | None = None
    output_mint: str | None = None
    amount: int | None = None
    order: str | None = None
    orders: tuple[str, ...] = ()  # a batch cancel's: the orders it may close
    receiver: str | None = None
    vault: str | None = None
    deposit: tuple[str, str, str] | None = None
    slippage_bps: int | None = None
    referral_fee_bps: int | None = None
    referral_account: str | None = None
    fee_bps: int | None = None
    quoted_out: int | None = None
    priority_fee_lamports: int | None = None
    recurring: RecurringTerms | None = None
    recurring_by_price: bool = False
    min_out: int | None = None
    reference_out: int | None = None
    max_deviation_bps: int | None = None
    price_problem: str | None = None  # why price protection cannot vouch for the run

    @property
    def mints(self) -> tuple[str, ...]:
        return tuple(m for m in (self.input_mint, self.output_mint) if m)
