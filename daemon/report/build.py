"""`jupcron report`: per plan, what the money did, read from the ``fills`` view,
the runs, the followed orders and the token facts. Read-only.

Amounts are only ever added within one wallet and one (input mint, output mint) pair:
a plan gets a row per wallet and pair it traded (`jupcron.report.pairs`; a fill is
its run's wallet's, `runs.wallet`), each with the plan's runs of that wallet.

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
    unmeasured    swaps that landed with no execute answer to measure them (settled
                  from the chain or by the operator): how many, and their exact input,
                  never in spent/received or a price (`jupcron.report.unmeasured`)
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

import hashlib
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Collection
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any

from sqlalchemy import Connection, String, and_, bindparam, or_, select, text

from jupcron.domain import RunStatus
from jupcron.report import unmeasured
from jupcron.report.pairs import PairRows
from jupcron.report.plan import Fill, PlanReport
from jupcron.store import tokens
from jupcron.store.audit import IDS_PER_QUERY
from jupcron.store.models import ExecuteResultRow, FollowedOrder, Plan, Run, RunEvent
from jupcron.store.plansort import in_chunks


def _moment(value: Any) -> datetime:
    """A time read from a view, in UTC: on PostgreSQL aware but in the session's
    ``TimeZone`` (the server's zone: plain SQL has no column type to convert it),
    on SQLite naive UTC text."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def build(
    conn: Connection,
    *,
    plan: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    wallet: str | None = None,
    names: Collection[str] | None = None,
) -> tuple[list[PlanReport], dict[str, tokens.Token]]:
    """Every plan's report rows, one per wallet and pair it traded (`jupcron.report.pairs`;
    or one plan's, or these `names`'), fills in [since, until). `wallet`: that wallet's
    rows only, those of its runs (`runs.wallet`: the wallet that signed them, whatever
    the plan names now) and of the plans naming it now that have none. With
    `names`, every query reads only their rows (the page's 100 of 100,000)."""
    if plan is not None:
        names = [plan]
    columns = (Plan.id, Plan.name, Plan.kind, Plan.request, Plan.settings, Plan.wallet)
    stmt = select(*columns).order_by(Plan.name)
    if names is not None:
        stmt = stmt.where(Plan.name.in_(list(names)))
    if wallet is not None:  # a plan moved away from it keeps its runs of it
        ran = select(Run.plan_id).where(Run.wallet == wallet)
        stmt = stmt.where(or_(Plan.wallet == wallet, Plan.id.in_(ran)))
    reports: dict[str, PlanReport] = {}
    for _, name, kind, request, settings, own in conn.execute(stmt):
        request = request if isinstance(request, dict) else {}
        report = PlanReport(name, kind, request.get("inputMint"), request.get("outputMint"))
        report.wallet = own
        if isinstance(settings, dict) and isinstance(settings.get("price_quote"), str):
            report.price_quote_override = settings["price_quote"]
        reports[name] = report
    only = None if names is None else list(reports)
    rows = PairRows(reports, wallet)
    _runs(conn, rows, since, until, only)
    _fills(conn, rows, since, until, only)
    _refunds(conn, rows, since, until, only)
    _swap_fees(conn, rows, since, until, only)
    unmeasured.add(conn, rows, since, until, only)
    _network_fees(conn, rows, since, until, only)
    built = rows.rows()
    _references(conn, built)
    known = tokens.known(conn)
    markets = _Markets.read(conn, built)
    for report in built:
        report.input_token = known.get(report.input_mint or "")
        report.output_token = known.get(report.output_mint or "")
        report.market_usd = markets.of(report)
    return built, known


def wallet_of(conn: Connection, plan: str) -> str | None:
    """The wallet plan `plan` names now; None if there is no such plan."""
    return conn.execute(select(Plan.wallet).where(Plan.name == plan)).scalar_one_or_none()


def not_found(conn: Connection, plan: str, wallet: str | None) -> str:
    """Why `build(plan=...)` found no row: no such plan, or (with `wallet`) a plan that
    names another wallet and has no runs with this one (at all, or in the period)."""
    own = wallet_of(conn, plan)
    if own is None or wallet is None:
        return f"no plan named {plan!r}"
    ran = (
        select(Run.id).join(Plan, Plan.id == Run.plan_id)
        .where(Plan.name == plan, Run.wallet == wallet).limit(1)
    )  # fmt: skip
    period = " in that period" if conn.execute(ran).first() is not None else ""
    return f"plan {plan!r} has no runs with wallet {wallet!r}{period} (it names wallet {own!r})"


class _Markets:
    """Each mint's stored USD prices (`tokens.PRICES`) over the period of every row's
    fills that trade it, read once for a build: the page's 100 plans that trade SOL
    for USDC read the follower's readings of both once, not once a plan (a row each
    poll for as long as the daemon runs). Kept as the times and the running sums of
    the prices (exact: Decimal), so a row's mean is two lookups."""

    def __init__(self, series: dict[str, tuple[list[datetime], list[Decimal]]]) -> None:
        self._series = series  # mint -> (times, sums: sums[i] = the first i prices' sum)

    @classmethod
    def read(cls, conn: Connection, reports: list[PlanReport]) -> _Markets:
        spans: dict[str, tuple[datetime, datetime]] = {}
        for report in reports:
            period = _fill_period(report)
            if period is None:
                continue
            for mint in (report.input_mint, report.output_mint):
                if mint is None:
                    continue
                low, high = spans.get(mint, period)
                spans[mint] = (min(low, period[0]), max(high, period[1]))
        series: dict[str, tuple[list[datetime], list[Decimal]]] = {}
        for mint, (since, until) in spans.items():
            times: list[datetime] = []
            sums = [Decimal(0)]
            for at, price in tokens.usd_prices(conn, mint, since, until):
                times.append(_moment(at))
                sums.append(sums[-1] + price)
            series[mint] = (times, sums)
        return cls(series)

    def of(self, report: PlanReport) -> tuple[Decimal | None, Decimal | None] | None:
        """Each side's mean USD price over the row's fills, first to last."""
        period = _fill_period(report)
        if period is None or report.input_mint is None or report.output_mint is None:
            return None
        return self._mean(report.input_mint, *period), self._mean(report.output_mint, *period)

    def _mean(self, mint: str, since: datetime, until: datetime) -> Decimal | None:
        """The mean of the prices read in [since, until]; None without any."""
        times, sums = self._series.get(mint, ([], [Decimal(0)]))
        first, last = bisect_left(times, since), bisect_right(times, until)
        return (sums[last] - sums[first]) / (last - first) if last > first else None


def _fill_period(report: PlanReport) -> tuple[datetime, datetime] | None:
    """When the row's first and last fills were; None without fills."""
    if not report.fills:
        return None
    times = [f.filled_at for f in report.fills]
    return min(times), max(times)


def _only(stmt: Any, only: list[str] | None) -> Any:
    return stmt if only is None else stmt.where(Plan.name.in_(only))


def _runs(conn: Connection, rows: PairRows, since: Any, until: Any,
          only: list[str] | None = None) -> None:  # fmt: skip
    stmt = _only(select(Plan.name, Run.status, Run.wallet).join(Plan, Plan.id == Run.plan_id), only)
    if since is not None:
        stmt = stmt.where(Run.scheduled_for >= since)
    if until is not None:
        stmt = stmt.where(Run.scheduled_for < until)
    for name, status, wallet in conn.execute(stmt):
        if name in rows.plans:
            rows.count_run(name, wallet, status)


# each fill with the wallet of its run: the wallet whose money it moved
_FILLS = ("SELECT f.plan_name, f.run_id, f.filled_at, f.source, f.in_amount, f.out_amount,"
          " f.input_mint, f.output_mint, f.fee_mint, f.fee_amount, f.signature,"
          " f.order_account, r.wallet FROM fills f JOIN runs r ON r.id = f.run_id")  # fmt: skip
_FILLS_ALL = _FILLS + " ORDER BY f.filled_at, f.run_id"
_FILLS_OF = _FILLS + " WHERE f.plan_name IN :names ORDER BY f.filled_at, f.run_id"


def _fills(conn: Connection, rows: PairRows, since: Any, until: Any,
           only: list[str] | None = None) -> None:  # fmt: skip
    if only is not None and not only:
        return
    query = text(_FILLS_ALL if only is None else _FILLS_OF)
    if only is not None:
        query = query.bindparams(bindparam("names", value=only, expanding=True, type_=String()))
    for row in conn.execute(query):
        if row.plan_name not in rows.plans:
            continue
        at = _moment(row.filled_at)
        if (since is not None and at < since) or (until is not None and at >= until):
            continue
        report = rows.of(row.plan_name, row.input_mint, row.output_mint, row.wallet)
        fill = Fill(row.run_id, at, row.source, int(row.in_amount), int(row.out_amount),
                    row.input_mint, row.output_mint, signature=row.signature,
                    order_account=row.order_account)  # fmt: skip
        report.fills.append(fill)
        report.spent += fill.in_amount
        report.received += fill.out_amount
        if row.fee_mint and row.fee_amount:
            report.fees[row.fee_mint] = report.fees.get(row.fee_mint, 0) + int(row.fee_amount)


def _references(conn: Connection, reports: list[PlanReport]) -> None:
    """Each execute fill's reference output, from its run's latest ``ordered`` event
    (scaled to the fill's input: the event's is for the order's)."""
    runs = sorted({f.run_id for r in reports for f in r.fills if f.source == "execute"})
    found: dict[int, tuple[int, int]] = {}  # run -> (reference in, reference out)
    for run_id, detail in _ordered_events(conn, runs):
        reference = ((detail or {}).get("price") or {}).get("reference") or {}
        try:
            pair = (int(reference["in_amount"]), int(reference["reference_out"]))
        except (KeyError, TypeError, ValueError):
            continue
        if pair[0] > 0 and pair[1] > 0:
            found[run_id] = pair
    for report in reports:
        for index, fill in enumerate(report.fills):
            known = found.get(fill.run_id) if fill.source == "execute" else None
            if known is None:
                continue
            scaled = Fraction(known[1]) * fill.in_amount / known[0]
            report.fills[index] = replace(
                fill, reference_out=scaled.numerator // scaled.denominator
            )


def _ordered_events(conn: Connection, runs: list[int]) -> list[tuple[int, Any]]:
    """(run, detail) of these runs' ``ordered`` events, each run's in the order they
    were written; the ids `IDS_PER_QUERY` at a time (a statement binds only so many: a
    busy store has more swap fills than PostgreSQL's 65,535 parameters)."""
    found: list[tuple[int, Any]] = []
    for part in in_chunks(runs, IDS_PER_QUERY):
        stmt = (
            select(RunEvent.run_id, RunEvent.detail)
            .where(RunEvent.step == "ordered", RunEvent.run_id.in_(part))
            .order_by(RunEvent.id)
        )
        found.extend((run_id, detail) for run_id, detail in conn.execute(stmt))
    return found


def _refunds(conn: Connection, rows: PairRows, since: Any, until: Any,
             only: list[str] | None = None) -> None:  # fmt: skip
    o = FollowedOrder
    stmt = _only(
        select(Plan.name, o.refunded, o.closed_at, o.input_mint, o.output_mint, Run.wallet)
        .join(Run, Run.id == o.run_id)
        .join(Plan, Plan.id == Run.plan_id)
        .where(o.refunded.is_not(None)),
        only,
    )
    for name, refunded, closed_at, input_mint, output_mint, wallet in conn.execute(stmt):
        if name not in rows.plans or closed_at is None or refunded is None:
            continue
        if (since is not None and closed_at < since) or (until is not None and closed_at >= until):
            continue
        # the refund is in the order's pair, back to its run's wallet
        report = rows.of(name, input_mint, output_mint, wallet)
        report.refunded += int(refunded)


def _swap_fees(conn: Connection, rows: PairRows, since: Any, until: Any,
               only: list[str] | None = None) -> None:  # fmt: skip
    e = ExecuteResultRow
    stmt = _only(
        select(
            Plan.name,
            Run.input_mint,
            Run.output_mint,
            e.total_input_amount,
            e.input_amount_result,
            e.total_output_amount,
            e.output_amount_result,
            e.recorded_at,
            Run.wallet,
        )
        .join(Run, Run.id == e.run_id)
        .join(Plan, Plan.id == Run.plan_id)
        .where(e.status == "Success"),
        only,
    )
    for found in conn.execute(stmt):
        name, in_mint, out_mint, total_in, in_result, total_out, out_result, at, wallet = found
        if name not in rows.plans:
            continue
        if (since is not None and at < since) or (until is not None and at >= until):
            continue
        for mint, more, less in ((in_mint, total_in, in_result), (out_mint, out_result, total_out)):
            if mint and more is not None and less is not None and int(more) > int(less):
                report = rows.of(name, in_mint, out_mint, wallet)  # the swap's pair
                report.fees[mint] = report.fees.get(mint, 0) + int(more) - int(less)


# the fees of the signed transactions decoded so far, by a digest of the text: the
# page builds its report every few seconds, and decoding every landed run's transaction
# each time was most of it. By the transaction, not the run id: the fee is the text's
# (another store's run 1 is another transaction). At most `FEES_KEPT` (about 200 bytes
# each); the first kept goes first, so a daemon that shows runs for months holds no
# more (a page's plans with more landed runs than that are decoded again).
_FEES: dict[bytes, tuple[int, int] | None] = {}
_FEES_LOCK = threading.Lock()  # the page's threads share it
FEES_KEPT = 50_000


def fees_paid(signed_tx: str) -> tuple[int, int] | None:
    """(base fee, priority fee) in lamports that the fee payer of this signed
    transaction pays, when its signature is already in it (ours, not Jupiter's: a
    gasless swap's payer signs at execute); None otherwise. Kept (`_FEES`)."""
    key = hashlib.blake2b(signed_tx.encode(), digest_size=16).digest()
    with _FEES_LOCK:
        if key in _FEES:
            return _FEES[key]
    paid = _decode_fees(signed_tx)
    with _FEES_LOCK:
        while len(_FEES) >= FEES_KEPT:
            del _FEES[next(iter(_FEES))]
        _FEES[key] = paid
    return paid


def _decode_fees(signed_tx: str) -> tuple[int, int] | None:
    from jupcron.txguard.decode import read, summarize

    try:
        unsigned = read(signed_tx)
        summary = summarize(unsigned.tx, {}, len(unsigned.raw))
    except ValueError:
        return None
    if summary is not None and summary.signers and summary.signers[0].signed:
        budget = summary.compute_budget
        return budget.base_fee_lamports, budget.priority_fee_lamports
    return None


def _network_fees(conn: Connection, rows: PairRows, since: Any, until: Any,
                  only: list[str] | None = None) -> None:  # fmt: skip
    """The fees of every landed run's transaction: succeeded, or failed on chain (a
    program error: it has a slot, and the network took its fee all the same). Each
    goes to the row of its run's wallet and pair, else (a batch cancel, a run without a
    pair) to the main row of its run's wallet: counted once. With `only`, those plans'
    runs alone: a page's build never reads every run's signed transaction."""
    landed = or_(
        Run.status == str(RunStatus.SUCCEEDED),
        and_(Run.status == str(RunStatus.FAILED), Run.slot.is_not(None)),
    )
    stmt = _only(
        select(Plan.name, Run.signed_tx, Run.input_mint, Run.output_mint, Run.wallet)
        .join(Plan, Plan.id == Run.plan_id)
        .where(landed, Run.signed_tx.is_not(None)),
        only,
    )
    if since is not None:
        stmt = stmt.where(Run.scheduled_for >= since)
    if until is not None:
        stmt = stmt.where(Run.scheduled_for < until)
    for name, signed_tx, input_mint, output_mint, wallet in conn.execute(stmt):
        if name not in rows.plans or not signed_tx:
            continue
        paid = fees_paid(signed_tx)
        report = None if paid is None else rows.known(name, input_mint, output_mint, wallet)
        if report is None or paid is None:
            continue
        report.network_fee_lamports += paid[0]
        report.priority_fee_lamports += paid[1]
        report.paid_runs += 1
