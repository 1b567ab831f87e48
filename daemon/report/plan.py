"""One plan's report: what its fills spent and received, at what average price, against
the reference, the market and the price now (`PlanReport`). `report.build` fills it
from the store; the CLI, the page and the charts read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any

from jupcron.domain import DEFAULT_WALLET
from jupcron.mints import SOL_MINT, USDC_MINT, USDT_MINT
from jupcron.price.limits import decimals_of, quote_mint
from jupcron.price.reference import vs_reference_bps
from jupcron.store import tokens

PRICE_DIGITS = 12
SHOWN_DIGITS = 8  # significant digits of a price for people (the JSON keeps PRICE_DIGITS)
LAMPORTS = 9  # SOL's decimals
# quoted first (`quote_side`): the dollar stablecoins, then SOL
STABLECOINS = frozenset({USDC_MINT, USDT_MINT, "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo"})


def quote_side(input_mint: str | None, output_mint: str | None, override: str | None) -> str:
    """Which side prices are quoted in: ``in`` or ``out``. The plan's ``price_quote``
    (a symbol or a mint of its pair) wins; then a stablecoin; then SOL; then the
    input (what the plan pays with)."""
    if override:
        wanted = quote_mint(override)
        if wanted == output_mint:
            return "out"
        if wanted == input_mint:
            return "in"
    for quotes in (STABLECOINS, {SOL_MINT}):
        if input_mint in quotes:
            return "in"
        if output_mint in quotes:
            return "out"
    return "in"


def _ratio(top: Decimal, bottom: Decimal) -> Decimal | None:
    if not bottom:
        return None
    with localcontext() as ctx:
        ctx.prec = PRICE_DIGITS
        return top / bottom


@dataclass(frozen=True)
class Fill:
    run_id: int
    filled_at: datetime
    source: str
    in_amount: int
    out_amount: int
    input_mint: str | None
    output_mint: str | None
    reference_out: int | None = None  # the oracle's output for this fill's input, when known
    signature: str | None = None
    order_account: str | None = None

    @property
    def vs_reference_bps(self) -> Decimal | None:
        if not self.reference_out:
            return None
        return vs_reference_bps(self.out_amount, self.reference_out)


@dataclass
class PlanReport:
    """One plan's figures in one (input mint, output mint) pair (`jupcron.report.pairs`):
    a plan that traded several pairs has one of these per pair."""

    plan_name: str
    kind: str
    input_mint: str | None = None
    output_mint: str | None = None
    runs: dict[str, int] = field(default_factory=dict)
    spent: int = 0
    received: int = 0
    refunded: int = 0
    fills: list[Fill] = field(default_factory=list)
    fees: dict[str, int] = field(default_factory=dict)
    input_token: tokens.Token | None = None
    output_token: tokens.Token | None = None
    price_quote_override: str | None = None
    network_fee_lamports: int = 0
    priority_fee_lamports: int = 0
    paid_runs: int = 0  # landed transactions whose fee we paid
    # swaps that landed (succeeded) with no execute answer to measure them: settled from
    # the chain or by the operator (`report.unmeasured`). Their input is known exactly
    # (ExactIn: the order's amount, what the signed transaction gives up), their output
    # is not; so they stay out of spent, received and every price, shown beside them
    unmeasured_runs: int = 0
    unmeasured_spent: int = 0
    pairs: int = 1  # how many pair rows its plan has with this wallet (`jupcron.report.pairs`)
    wallets: int = 1  # how many wallets its plan traded with (a row each, at least)
    # the mean USD price of each side over the plan's fills (first to last): the market
    market_usd: tuple[Decimal | None, Decimal | None] | None = None
    # the wallet (its configured name) whose runs these are: the plan's current one for
    # a plan that has not traded (a plan moved to another wallet has a row for each)
    wallet: str = DEFAULT_WALLET

    @property
    def title(self) -> str:
        """The plan's name; with its pair when the plan has several (``buy (USDC → JUP)``),
        and its wallet when it traded with several (``buy [savings]``)."""
        title = self.plan_name
        if self.pairs > 1:
            sides = ((self.input_token, self.input_mint), (self.output_token, self.output_mint))
            label = [t.label if t else tokens.short(m or "") for t, m in sides]
            title = f"{title} ({label[0]} → {label[1]})"
        return f"{title} [{self.wallet}]" if self.wallets > 1 else title

    # ---- quotes ---------------------------------------------------------------------
    @property
    def quote(self) -> str:
        """``in`` or ``out``: the side prices are quoted in."""
        return quote_side(self.input_mint, self.output_mint, self.price_quote_override)

    @property
    def quote_token(self) -> tokens.Token | None:
        return self.input_token if self.quote == "in" else self.output_token

    @property
    def base_token(self) -> tokens.Token | None:
        return self.output_token if self.quote == "in" else self.input_token

    def quoted(self, in_amount: int, out_amount: int) -> Decimal | None:
        """The price of a trade of these base units: quote per one base token."""
        spent, got = self.human_in(in_amount), self.human_out(out_amount)
        if spent is None or got is None:
            return None
        return _ratio(spent, got) if self.quote == "in" else _ratio(got, spent)

    def price_unit(self) -> str | None:
        """``USDC per SOL``."""
        quote, base = self.quote_token, self.base_token
        return None if quote is None or base is None else f"{quote.label} per {base.label}"

    def current_price(self) -> Decimal | None:
        """Quote per base now, from the stored USD prices."""
        quote, base = self.quote_token, self.base_token
        if quote is None or base is None or not quote.usd_price or base.usd_price is None:
            return None
        return _ratio(base.usd_price, quote.usd_price)

    def value_now(self) -> tuple[Decimal, Decimal] | None:
        """(value now of what was received, of what was spent), both in the quote token."""
        price = self.current_price()
        spent, got = self.human_in(self.spent), self.human_out(self.received)
        if price is None or spent is None or got is None:
            return None
        if self.quote == "in":
            return got * price, spent
        return got, spent * price

    def unrealised_pnl(self) -> Decimal | None:
        """What was received is worth this much more (less) now than what was spent."""
        values = self.value_now()
        return None if values is None else values[0] - values[1]

    def usd(self, amount: Decimal | None) -> Decimal | None:
        quote = self.quote_token
        if amount is None or quote is None or quote.usd_price is None:
            return None
        return amount * quote.usd_price

    def market_price(self) -> Decimal | None:
        """Quote per base on average over the period of the fills (the stored USD
        prices read then): what the market gave while the plan bought."""
        if self.market_usd is None:
            return None
        usd_in, usd_out = self.market_usd
        base, quote = (usd_out, usd_in) if self.quote == "in" else (usd_in, usd_out)
        if base is None or not quote:
            return None
        return _ratio(base, quote)

    def vs_market_bps(self) -> Decimal | None:
        """The average price against the market over the same period, in bps (positive:
        better than the market: bought for less, or sold for more)."""
        return _vs(self.average_price(), self.market_price(), self.quote)

    def vs_current_bps(self) -> Decimal | None:
        """The average price against the price now, in bps (positive: better than
        now, i.e. bought for less or sold for more)."""
        return _vs(self.average_price(), self.current_price(), self.quote)

    # ---- derived, exact -----------------------------------------------------------
    def human_in(self, amount: int) -> Decimal | None:
        return None if self.input_token is None else self.input_token.human(amount)

    def human_out(self, amount: int) -> Decimal | None:
        return None if self.output_token is None else self.output_token.human(amount)

    def average_price(self) -> Decimal | None:
        """Quote per one base token over every fill (`quote_side`)."""
        return self.quoted(self.spent, self.received)

    def average_cost(self) -> Decimal | None:
        """Input per output, in token units."""
        spent, got = self.human_in(self.spent), self.human_out(self.received)
        if spent is None or got is None or not got:
            return None
        with localcontext() as ctx:
            ctx.prec = PRICE_DIGITS
            return spent / got

    def _referenced(self) -> list[Fill]:
        return [f for f in self.fills if f.reference_out]

    def reference_price(self) -> Decimal | None:
        """Output per input (token units) the reference implied, over fills that have one."""
        fills = self._referenced()
        in_dec = (
            self.input_token.decimals if self.input_token else decimals_of(self.input_mint or "")
        )
        out_dec = (
            self.output_token.decimals if self.output_token else decimals_of(self.output_mint or "")
        )
        if not fills or in_dec is None or out_dec is None:
            return None
        spent = tokens.human(sum(f.in_amount for f in fills), in_dec)
        got = tokens.human(sum(f.reference_out or 0 for f in fills), out_dec)
        if not spent:
            return None
        with localcontext() as ctx:
            ctx.prec = PRICE_DIGITS
            return got / spent

    def vs_reference_bps(self) -> Decimal | None:
        """What the fills with a reference received against it, in bps."""
        fills = self._referenced()
        if not fills:
            return None
        reference = sum(f.reference_out or 0 for f in fills)
        return vs_reference_bps(sum(f.out_amount for f in fills), reference)

    @property
    def first_fill(self) -> datetime | None:
        return min((f.filled_at for f in self.fills), default=None)

    @property
    def last_fill(self) -> datetime | None:
        return max((f.filled_at for f in self.fills), default=None)

    def fee_list(self, known: dict[str, tokens.Token]) -> list[dict[str, Any]]:
        out = []
        for mint, amount in sorted(self.fees.items()):
            token = known.get(mint)
            shown = None if token is None else format(token.human(amount), "f")
            out.append({"mint": mint, "amount": str(amount), "amount_ui": shown})
        return out

    def as_dict(self, known: dict[str, tokens.Token]) -> dict[str, Any]:
        """The JSON object (amounts in base units as strings: a u64 is no JSON double)."""

        def ui(value: Decimal | None) -> str | None:
            return None if value is None else format(value, "f")

        def when(value: datetime | None) -> str | None:
            return None if value is None else value.isoformat()

        values = self.value_now()
        pnl = self.unrealised_pnl()
        quote = self.quote_token
        return {
            "plan_name": self.plan_name, "kind": self.kind, "wallet": self.wallet,
            "input_mint": self.input_mint, "output_mint": self.output_mint,
            "input_symbol": self.input_token.symbol if self.input_token else None,
            "output_symbol": self.output_token.symbol if self.output_token else None,
            "runs": dict(sorted(self.runs.items())),
            "spent": str(self.spent), "spent_ui": ui(self.human_in(self.spent)),
            "received": str(self.received), "received_ui": ui(self.human_out(self.received)),
            "refunded": str(self.refunded), "refunded_ui": ui(self.human_in(self.refunded)),
            "fills": len(self.fills),
            "unmeasured_runs": self.unmeasured_runs,
            "unmeasured_spent": str(self.unmeasured_spent),
            "unmeasured_spent_ui": ui(self.human_in(self.unmeasured_spent)),
            "average_price": ui(self.average_price()), "average_cost": ui(self.average_cost()),
            "fees": self.fee_list(known),
            "first_fill": when(self.first_fill), "last_fill": when(self.last_fill),
            "reference_price": ui(self.reference_price()),
            "vs_reference_bps": ui(self.vs_reference_bps()),
            "price_quote": quote.label if quote else None,
            "price_base": self.base_token.label if self.base_token else None,
            "input_decimals": self.input_token.decimals if self.input_token else None,
            "output_decimals": self.output_token.decimals if self.output_token else None,
            "refund_mint": self.input_mint if self.refunded else None,
            "refund_symbol": (self.input_token.label if self.input_token else None)
            if self.refunded else None,
            "network_fee_lamports": str(self.network_fee_lamports),
            "priority_fee_lamports": str(self.priority_fee_lamports),
            "network_fee_sol": ui(tokens.human(self.network_fee_lamports, LAMPORTS)),
            "priority_fee_sol": ui(tokens.human(self.priority_fee_lamports, LAMPORTS)),
            "current_price": ui(self.current_price()),
            "current_value": ui(values[0]) if values else None,
            "unrealised_pnl": ui(pnl),
            "current_value_usd": ui(self.usd(values[0] if values else None)),
            "unrealised_pnl_usd": ui(self.usd(pnl)),
            "vs_current_bps": ui(self.vs_current_bps()),
            "market_price": ui(self.market_price()),
            "vs_market_bps": ui(self.vs_market_bps()),
        }  # fmt: skip


def _vs(average: Decimal | None, market: Decimal | None, quote: str) -> Decimal | None:
    """`average` against `market` in bps, positive when it is the better price for us
    (buying: lower; selling: higher)."""
    if average is None or not market:
        return None
    sign = 1 if quote == "in" else -1
    with localcontext() as ctx:
        ctx.prec = PRICE_DIGITS
        return (sign * (market - average) / market * 10_000).quantize(Decimal("0.01"))
