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
A fill has a reference when its run recorded one in its ``ordered`` event (a swap
with ``rpc.url`` and feeds for both mints): the price at the time of the order,
seconds before the fill. Recurring and trigger fills happen later, at prices no
run read: they have none.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from sqlalchemy import Connection, select, text

from daemon.price.limits import decimals_of
from daemon.price.reference import vs_reference_bps
from daemon.store import tokens
from daemon.store.models import ExecuteResultRow, FollowedOrder, Plan, Run, RunEvent

PRICE_DIGITS = 12


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

    # ---- derived, exact -----------------------------------------------------------
    def human_in(self, amount: int) -> Decimal | None:
        return None if self.input_token is None else self.input_token.human(amount)

    def human_out(self, amount: int) -> Decimal | None:
        return None if self.output_token is None else self.output_token.human(amount)

    def average_price(self) -> Decimal | None:
        """Output per input, in token units."""
        spent, got = self.human_in(self.spent), self.human_out(self.received)
        if spent is None or got is None or not spent:
            return None
        with localcontext() as ctx:
            ctx.prec = PRICE_DIGITS
            return got / spent

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
        }  # fmt: skip


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
    stmt = select(Plan.id, Plan.name, Plan.kind, Plan.request).order_by(Plan.name)
    if plan is not None:
        stmt = stmt.where(Plan.name == plan)
    reports: dict[str, PlanReport] = {}
    for _, name, kind, request in conn.execute(stmt):
        request = request if isinstance(request, dict) else {}
        reports[name] = PlanReport(name, kind, request.get("inputMint"), request.get("outputMint"))
    _runs(conn, reports, since, until)
    _fills(conn, reports, since, until)
    _references(conn, reports)
    _refunds(conn, reports, since, until)
    _swap_fees(conn, reports, since, until)
    known = tokens.known(conn)
    for report in reports.values():
        if report.input_mint is None and report.fills:
            report.input_mint = report.fills[0].input_mint
            report.output_mint = report.fills[0].output_mint
        report.input_token = known.get(report.input_mint or "")
        report.output_token = known.get(report.output_mint or "")
    return list(reports.values()), known


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
           " output_mint, fee_mint, fee_amount FROM fills ORDER BY filled_at, run_id")  # fmt: skip
    for row in conn.execute(text(sql)):
        report = reports.get(row.plan_name)
        if report is None:
            continue
        at = _moment(row.filled_at)
        if (since is not None and at < since) or (until is not None and at >= until):
            continue
        fill = Fill(row.run_id, at, row.source, int(row.in_amount), int(row.out_amount),
                    row.input_mint, row.output_mint)  # fmt: skip
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
            report.fills[index] = Fill(
                fill.run_id, fill.filled_at, fill.source, fill.in_amount, fill.out_amount,
                fill.input_mint, fill.output_mint, scaled.numerator // scaled.denominator,
            )  # fmt: skip


def _refunds(conn: Connection, reports: dict[str, PlanReport], since: Any, until: Any) -> None:
    stmt = (
        select(Plan.name, FollowedOrder.refunded, FollowedOrder.closed_at)
        .join(Run, Run.id == FollowedOrder.run_id)
        .join(Plan, Plan.id == Run.plan_id)
        .where(FollowedOrder.refunded.is_not(None))
    )
    for name, refunded, closed_at in conn.execute(stmt):
        if name not in reports or closed_at is None or refunded is None:
            continue
        if (since is not None and closed_at < since) or (until is not None and closed_at >= until):
            continue
        reports[name].refunded += int(refunded)


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
