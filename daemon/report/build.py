"""`jupcron report`: per plan, what the money did, read from the ``fills`` view,
the runs, the followed orders and the token facts. Read-only.

    spent     input given up in fills (base units)      received  output got from fills
    refunded  input given back by a cancel or close     fills     how many
    average price  received / spent in token units (and its inverse), from the
                   exact base units and the mints' decimals, with Decimal
    fees      per mint: recurring/trigger trades' fee, and for swaps what the
              execute answer shows (totalInputAmount - inputAmountResult in the
              input mint, outputAmountResult - totalOutputAmount in the output mint)
    reference_price   output per input (token units) the oracle's reference implied,
                      over the fills that have one (docs/price-protection.md)
    vs_reference_bps  what those fills received against that reference, in bps
                      (negative: worse than the reference)
    price_quote   the token prices are quoted in (`quote_side`): the plan's
                  ``price_quote``, else a stablecoin, else SOL, else the input;
                  ``average_price`` is quote per one base token (150.15 USDC per SOL)
    network/priority fees  lamports our wallet paid for the landed (succeeded)
                  transactions it signed as fee payer, decoded from the stored
                  signed transaction as the runtime charges them
    current_price, current_value, unrealised_pnl   from the last USD prices stored
                  with the token facts: the value now of what was received, less
                  the value now of what was spent, in the quote token (and USD)
A fill has a reference when its run recorded one in its ``ordered`` event (a swap
with ``rpc.url`` and feeds for both mints): the price at the time of the order,
seconds before the fill. Recurring and trigger fills happen later, at prices no
run read: they have none.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from sqlalchemy import Connection, and_, or_, select, text

from jupcron.price.limits import SOL_MINT, USDC_MINT, USDT_MINT, decimals_of, quote_mint
from jupcron.price.reference import vs_reference_bps
from jupcron.store import tokens
from jupcron.store.models import ExecuteResultRow, FollowedOrder, Plan, Run, RunEvent
from jupcron.store.types import RunStatus

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
    order_mints: tuple[str | None, str | None] | None = None  # a followed order's pair
    # the mean USD price of each side over the plan's fills (first to last): the market
    market_usd: tuple[Decimal | None, Decimal | None] | None = None

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
            "plan_name": self.plan_name, "kind": self.kind,
            "input_mint": self.input_mint, "output_mint": self.output_mint,
            "input_symbol": self.input_token.symbol if self.input_token else None,
            "output_symbol": self.output_token.symbol if self.output_token else None,
            "runs": dict(sorted(self.runs.items())),
            "spent": str(self.spent), "spent_ui": ui(self.human_in(self.spent)),
            "received": str(self.received), "received_ui": ui(self.human_out(self.received)),
            "refunded": str(self.refunded), "refunded_ui": ui(self.human_in(self.refunded)),
            "fills": len(self.fills),
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


def _moment(value: Any) -> datetime:
    """A time read from a view: aware on PostgreSQL, naive UTC text on SQLite."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def build(
    conn: Connection,
    *,
    plan: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[list[PlanReport], dict[str, tokens.Token]]:
    """Every plan's report (or one plan's), fills in [since, until)."""
    stmt = select(Plan.id, Plan.name, Plan.kind, Plan.request, Plan.settings).order_by(Plan.name)
    if plan is not None:
        stmt = stmt.where(Plan.name == plan)
    reports: dict[str, PlanReport] = {}
    for _, name, kind, request, settings in conn.execute(stmt):
        request = request if isinstance(request, dict) else {}
        report = PlanReport(name, kind, request.get("inputMint"), request.get("outputMint"))
        if isinstance(settings, dict) and isinstance(settings.get("price_quote"), str):
            report.price_quote_override = settings["price_quote"]
        reports[name] = report
    _runs(conn, reports, since, until)
    _fills(conn, reports, since, until)
    _references(conn, reports)
    _refunds(conn, reports, since, until)
    _swap_fees(conn, reports, since, until)
    _network_fees(conn, reports, since, until)
    known = tokens.known(conn)
    for report in reports.values():
        if report.input_mint is None and report.fills:
            report.input_mint = report.fills[0].input_mint
            report.output_mint = report.fills[0].output_mint
        if report.input_mint is None and report.order_mints is not None:
            report.input_mint, report.output_mint = report.order_mints
        report.input_token = known.get(report.input_mint or "")
        report.output_token = known.get(report.output_mint or "")
        report.market_usd = _market(conn, report)
    return list(reports.values()), known


def _market(conn: Connection, report: PlanReport) -> tuple[Decimal | None, Decimal | None] | None:
    """Each side's mean USD price over the plan's fills, first to last."""
    if not report.fills or report.input_mint is None or report.output_mint is None:
        return None
    times = [f.filled_at for f in report.fills]
    since, until = min(times), max(times)
    return (
        tokens.average_usd(conn, report.input_mint, since, until),
        tokens.average_usd(conn, report.output_mint, since, until),
    )


def _runs(conn: Connection, reports: dict[str, PlanReport], since: Any, until: Any) -> None:
    stmt = select(Plan.name, Run.status).join(Plan, Plan.id == Run.plan_id)
    if since is not None:
        stmt = stmt.where(Run.scheduled_for >= since)
    if until is not None:
        stmt = stmt.where(Run.scheduled_for < until)
    for name, status in conn.execute(stmt):
        if name in reports:
            runs = reports[name].runs
            runs[status] = runs.get(status, 0) + 1


def _fills(conn: Connection, reports: dict[str, PlanReport], since: Any, until: Any) -> None:
    sql = ("SELECT plan_name, run_id, filled_at, source, in_amount, out_amount, input_mint,"
           " output_mint, fee_mint, fee_amount, signature, order_account FROM fills"
           " ORDER BY filled_at, run_id")  # fmt: skip
    for row in conn.execute(text(sql)):
        report = reports.get(row.plan_name)
        if report is None:
            continue
        at = _moment(row.filled_at)
        if (since is not None and at < since) or (until is not None and at >= until):
            continue
        fill = Fill(row.run_id, at, row.source, int(row.in_amount), int(row.out_amount),
                    row.input_mint, row.output_mint, signature=row.signature,
                    order_account=row.order_account)  # fmt: skip
        report.fills.append(fill)
        report.spent += fill.in_amount
        report.received += fill.out_amount
        if row.fee_mint and row.fee_amount:
            report.fees[row.fee_mint] = report.fees.get(row.fee_mint, 0) + int(row.fee_amount)


def _references(conn: Connection, reports: dict[str, PlanReport]) -> None:
    """Each execute fill's reference output, from its run's latest ``ordered`` event
    (scaled to the fill's input: the event's is for the order's)."""
    runs = {f.run_id for r in reports.values() for f in r.fills if f.source == "execute"}
    if not runs:
        return
    stmt = (
        select(RunEvent.run_id, RunEvent.detail)
        .where(RunEvent.step == "ordered", RunEvent.run_id.in_(runs))
        .order_by(RunEvent.id)
    )
    found: dict[int, tuple[int, int]] = {}  # run -> (reference in, reference out)
    for run_id, detail in conn.execute(stmt):
        reference = ((detail or {}).get("price") or {}).get("reference") or {}
        try:
            pair = (int(reference["in_amount"]), int(reference["reference_out"]))
        except (KeyError, TypeError, ValueError):
            continue
        if pair[0] > 0 and pair[1] > 0:
            found[run_id] = pair
    for report in reports.values():
        for index, fill in enumerate(report.fills):
            known = found.get(fill.run_id) if fill.source == "execute" else None
            if known is None:
                continue
            scaled = Fraction(known[1]) * fill.in_amount / known[0]
            report.fills[index] = replace(
                fill, reference_out=scaled.numerator // scaled.denominator
            )


def _refunds(conn: Connection, reports: dict[str, PlanReport], since: Any, until: Any) -> None:
    o = FollowedOrder
    stmt = (
        select(Plan.name, o.refunded, o.closed_at, o.input_mint, o.output_mint)
        .join(Run, Run.id == o.run_id)
        .join(Plan, Plan.id == Run.plan_id)
        .where(o.refunded.is_not(None))
    )
    for name, refunded, closed_at, input_mint, output_mint in conn.execute(stmt):
        if name not in reports or closed_at is None or refunded is None:
            continue
        if (since is not None and closed_at < since) or (until is not None and closed_at >= until):
            continue
        reports[name].refunded += int(refunded)
        if input_mint:
            reports[name].order_mints = (input_mint, output_mint)


def _swap_fees(conn: Connection, reports: dict[str, PlanReport], since: Any, until: Any) -> None:
    e = ExecuteResultRow
    stmt = (
        select(
            Plan.name,
            Run.input_mint,
            Run.output_mint,
            e.total_input_amount,
            e.input_amount_result,
            e.total_output_amount,
            e.output_amount_result,
            e.recorded_at,
        )
        .join(Run, Run.id == e.run_id)
        .join(Plan, Plan.id == Run.plan_id)
        .where(e.status == "Success")
    )
    fees: dict[str, dict[str, int]] = defaultdict(dict)
    for name, in_mint, out_mint, total_in, in_result, total_out, out_result, at in conn.execute(
        stmt
    ):
        if name not in reports:
            continue
        if (since is not None and at < since) or (until is not None and at >= until):
            continue
        for mint, more, less in ((in_mint, total_in, in_result), (out_mint, out_result, total_out)):
            if mint and more is not None and less is not None and int(more) > int(less):
                fees[name][mint] = fees[name].get(mint, 0) + int(more) - int(less)
    for name, by_mint in fees.items():
        for mint, amount in by_mint.items():
            reports[name].fees[mint] = reports[name].fees.get(mint, 0) + amount


_FEES: dict[int, tuple[int, int] | None] = {}  # run id -> (base, priority) lamports we paid


def fees_paid(signed_tx: str, run_id: int | None = None) -> tuple[int, int] | None:
    """(base fee, priority fee) in lamports that the fee payer of this signed
    transaction pays, when its signature is already in it (ours, not Jupiter's: a
    gasless swap's payer signs at execute); None otherwise. Cached per run."""
    if run_id is not None and run_id in _FEES:
        return _FEES[run_id]
    from jupcron.txguard.decode import load, summarize

    paid: tuple[int, int] | None = None
    try:
        tx, size = load(signed_tx)
        summary = summarize(tx, {}, size)
    except ValueError:
        summary = None
    if summary is not None and summary.signers and summary.signers[0].signed:
        budget = summary.compute_budget
        paid = (budget.base_fee_lamports, budget.priority_fee_lamports)
    if run_id is not None:
        _FEES[run_id] = paid
    return paid


def _network_fees(conn: Connection, reports: dict[str, PlanReport], since: Any, until: Any) -> None:
    """The fees of every landed run's transaction: succeeded, or failed on chain (a
    program error: it has a slot, and the network took its fee all the same)."""
    landed = or_(
        Run.status == str(RunStatus.SUCCEEDED),
        and_(Run.status == str(RunStatus.FAILED), Run.slot.is_not(None)),
    )
    stmt = (
        select(Plan.name, Run.id, Run.signed_tx)
        .join(Plan, Plan.id == Run.plan_id)
        .where(landed, Run.signed_tx.is_not(None))
    )
    if since is not None:
        stmt = stmt.where(Run.scheduled_for >= since)
    if until is not None:
        stmt = stmt.where(Run.scheduled_for < until)
    for name, run_id, signed_tx in conn.execute(stmt):
        report = reports.get(name)
        paid = None if report is None or not signed_tx else fees_paid(signed_tx, run_id)
        if report is None or paid is None:
            continue
        report.network_fee_lamports += paid[0]
        report.priority_fee_lamports += paid[1]
        report.paid_runs += 1
