"""`jupcron report`'s rows: a plan's table row, the totals over plans, the fills, and
the CSV of the plans; read by the CLI and the demo."""

from __future__ import annotations

import csv
import io
from datetime import UTC
from decimal import Decimal, localcontext
from typing import Any

from jupcron.report.listing import csv_cell, render
from jupcron.report.plan import SHOWN_DIGITS, PlanReport
from jupcron.store import tokens
from jupcron.visible import visible

TABLE_COLUMNS = ("plan_name", "kind", "runs", "spent", "received", "average_price", "fills",
                 "refunded", "fees", "network_fees", "value_now", "unrealised_pnl",
                 "first_fill", "last_fill", "vs_reference_bps")  # fmt: skip
CSV_COLUMNS = ("plan_name", "kind", "input_mint", "output_mint", "input_symbol", "output_symbol",
               "runs", "spent", "spent_ui", "received", "received_ui", "refunded",
               "refunded_ui", "fills", "average_price", "price_quote", "price_base",
               "average_cost", "fees", "network_fee_lamports", "priority_fee_lamports",
               "network_fee_sol", "priority_fee_sol", "current_price", "current_value",
               "unrealised_pnl", "current_value_usd", "unrealised_pnl_usd", "first_fill",
               "last_fill", "reference_price", "vs_reference_bps", "wallet",
               # landed swaps no answer measured: beside spent, never in it (unmeasured.py)
               "unmeasured_runs", "unmeasured_spent", "unmeasured_spent_ui")  # fmt: skip
FILL_COLUMNS = ("filled_at", "plan_name", "source", "spent", "input_symbol", "received",
                "output_symbol", "price", "price_unit", "in_amount", "out_amount", "input_mint",
                "output_mint", "vs_reference_bps", "signature", "order_account",
                "run_id", "wallet")  # fmt: skip
TOTAL_COLUMNS = ("token", "spent", "received", "refunded", "fees")
TOTAL_CSV = ("mint", "symbol", "spent", "spent_ui", "received", "received_ui", "refunded",
             "refunded_ui", "fees", "fees_ui", "unmeasured_spent",
             "unmeasured_spent_ui")  # fmt: skip


def _amount(report: PlanReport, value: int, side: str, known: dict[str, tokens.Token]) -> str:
    token = report.input_token if side == "in" else report.output_token
    if token is None:
        return f"{value} (base units)" if value else "-"
    return token.show(value) if value else "-"


def _price(value: Decimal | None) -> str:
    """A price for people: at most `SHOWN_DIGITS` significant digits."""
    if value is None:
        return "-"
    with localcontext() as ctx:
        ctx.prec = SHOWN_DIGITS
        return tokens.plain(+value)


def _in_units(value: Decimal, token: tokens.Token) -> str:
    """An amount of `token` worth showing (a value now, a P&L) to the token's own unit:
    its every whole digit kept (never a few significant digits: 149,850,018.499999 USDC
    is not ``149850020``), rounded only below one base unit."""
    with localcontext() as ctx:
        ctx.prec = max(28, value.adjusted() + token.decimals + 2)  # quantize never overflows
        return tokens.plain(value.quantize(Decimal(1).scaleb(-token.decimals)))


def _sol(lamports: int) -> str:
    return f"{tokens.plain(tokens.human(lamports, 9))} SOL"


def table_row(report: PlanReport, known: dict[str, tokens.Token]) -> dict[str, Any]:
    unit = report.price_unit() or ""
    fees = ", ".join(
        known[mint].show(amount)
        if mint in known
        else f"{amount} (base units of {tokens.short(mint)})"
        for mint, amount in sorted(report.fees.items())
    )
    paid = report.network_fee_lamports + report.priority_fee_lamports
    network = _sol(paid) if paid else "-"  # base + priority (JSON and CSV have both)
    values, pnl = report.value_now(), report.unrealised_pnl()
    token = report.quote_token  # known whenever there is a value: it prices it
    quote = token.label if token else ""
    # a plan that traded with several wallets has a row for each: say whose
    name = report.plan_name if report.wallets <= 1 else f"{report.plan_name} [{report.wallet}]"
    return {
        "plan_name": name, "kind": report.kind,
        "runs": ", ".join(f"{status} {n}" for status, n in sorted(report.runs.items())) or "-",
        "spent": _spent(report, known),
        "received": _amount(report, report.received, "out", known),
        "average_price": f"{_price(report.average_price())} {unit}"
        if report.average_price() is not None else "-",
        "fills": _fills(report),
        "refunded": _amount(report, report.refunded, "in", known),
        "fees": fees or "-",
        "network_fees": network,
        "value_now": f"{_in_units(values[0], token)} {quote}"
        if values and token and report.fills else "-",
        "unrealised_pnl": f"{_signed(pnl, token)} {quote}"
        if pnl is not None and token and report.fills else "-",
        "first_fill": report.first_fill.strftime("%Y-%m-%d %H:%M") if report.first_fill else "-",
        "last_fill": report.last_fill.strftime("%Y-%m-%d %H:%M") if report.last_fill else "-",
        "vs_reference_bps": _bps(report.vs_reference_bps()),
    }  # fmt: skip


def _spent(report: PlanReport, known: dict[str, tokens.Token]) -> str:
    """The measured input; a landed swap no answer measured is said beside it, never
    silently left out (`jupcron.report.unmeasured`)."""
    spent = _amount(report, report.spent, "in", known)
    if not report.unmeasured_spent:
        return spent
    return f"{spent} (+{_amount(report, report.unmeasured_spent, 'in', known)} unmeasured)"


def _fills(report: PlanReport) -> int | str:
    if not report.unmeasured_runs:
        return len(report.fills)
    return f"{len(report.fills)} (+{report.unmeasured_runs} landed, amounts unknown)"


def _signed(value: Decimal, token: tokens.Token) -> str:
    """``+12.5``/``-0.25``: a loss below one base unit reads ``+0``, never ``-0``."""
    text = _in_units(abs(value), token)
    return f"-{text}" if value < 0 and text != "0" else f"+{text}"


def totals(reports: list[PlanReport], known: dict[str, tokens.Token]) -> dict[str, Any]:
    """Every plan together (`reports`: a row per plan and pair; `plans` counts plans):
    per token spent, received, refunded and Jupiter's fees (base
    units and token units), the network fees in SOL, and the USD value and P&L where
    every plan with fills has a price; landed swaps no answer measured apart
    (``unmeasured_runs``, each token's ``unmeasured_spent``: `jupcron.report.unmeasured`)."""
    by_mint: dict[str, dict[str, int]] = {}

    def add(mint: str | None, key: str, amount: int) -> None:
        if mint and amount:
            row = by_mint.setdefault(mint, {"spent": 0, "received": 0, "refunded": 0, "fees": 0})
            row[key] = row.get(key, 0) + amount  # unmeasured_spent: only where there is some

    for r in reports:
        add(r.input_mint, "spent", r.spent)
        add(r.output_mint, "received", r.received)
        add(r.input_mint, "refunded", r.refunded)
        add(r.input_mint, "unmeasured_spent", r.unmeasured_spent)
        for mint, amount in r.fees.items():
            add(mint, "fees", amount)
    rows = []
    for mint, sums in sorted(by_mint.items()):
        token = known.get(mint)
        row: dict[str, Any] = {"mint": mint, "symbol": token.label if token else None}
        for key, amount in sums.items():
            row[key] = str(amount)
            row[f"{key}_ui"] = format(token.human(amount), "f") if token else None
        rows.append(row)
    filled = [r for r in reports if r.fills]
    values = [r.usd(v[0]) if (v := r.value_now()) else None for r in filled]
    pnls = [r.usd(r.unrealised_pnl()) for r in filled]
    network = sum(r.network_fee_lamports for r in reports)
    priority = sum(r.priority_fee_lamports for r in reports)

    def total(parts: list[Decimal | None]) -> str | None:
        if not parts or any(p is None for p in parts):
            return None
        return format(sum(p for p in parts if p is not None), "f")

    return {
        "plans": len({r.plan_name for r in reports}),
        "fills": sum(len(r.fills) for r in reports), "tokens": rows,
        "unmeasured_runs": sum(r.unmeasured_runs for r in reports),
        "network_fee_lamports": str(network), "priority_fee_lamports": str(priority),
        "network_fee_sol": format(tokens.human(network, 9), "f"),
        "priority_fee_sol": format(tokens.human(priority, 9), "f"),
        "current_value_usd": total(values), "unrealised_pnl_usd": total(pnls),
    }  # fmt: skip


def _total_amount(base: str, ui: str | None) -> str:
    """Token units; base units said so where the mint's decimals are unknown."""
    if ui is not None:
        return tokens.plain(Decimal(ui))
    return base if base == "0" else f"{base} (base units)"


def total_lines(total: dict[str, Any]) -> str:
    rows = [
        {
            "token": t["symbol"] or tokens.short(t["mint"]),
            **{k: _total_amount(t[k], t[f"{k}_ui"])
               for k in ("spent", "received", "refunded", "fees")},
        }
        for t in total["tokens"]
    ]  # fmt: skip
    fees = int(total["network_fee_lamports"]) + int(total["priority_fee_lamports"])
    lines = [f"total over {total['plans']} plans, {total['fills']} fills:",
             render(rows, TOTAL_COLUMNS, "table"),
             f"network fees paid: {_sol(fees)} ({_sol(int(total['network_fee_lamports']))} base"
             f" + {_sol(int(total['priority_fee_lamports']))} priority)"]  # fmt: skip
    if total.get("unmeasured_runs"):  # beside the table's figures, never in them
        gave = ", ".join(_total_amount(t["unmeasured_spent"], t["unmeasured_spent_ui"])
                         + f" {t['symbol'] or tokens.short(t['mint'])}"
                         for t in total["tokens"] if t.get("unmeasured_spent"))  # fmt: skip
        lines.append(visible(  # its symbols are the token API's, as in the table above
            f"not in these figures: {total['unmeasured_runs']} swaps that landed with"
            f" no answer to measure them, spending {gave} (their output unknown)"
        ))  # fmt: skip
    if total["current_value_usd"] is not None:
        value = Decimal(total["current_value_usd"])
        pnl = Decimal(total["unrealised_pnl_usd"])
        # `z`: an amount that rounds to 0.00 reads without a sign (never ``-0.00 USD``)
        lines.append(f"value now: {value:z,.2f} USD, unrealised P&L {pnl:z+,.2f} USD")
    return "\n".join(lines)


def fill_rows(reports: list[PlanReport]) -> list[dict[str, Any]]:
    """One row per fill, oldest first: token units beside base units; times as
    ``YYYY-MM-DD HH:MM:SS`` UTC (a spreadsheet reads them as dates)."""
    rows = []
    for r in reports:
        for f in r.fills:
            spent, got = r.human_in(f.in_amount), r.human_out(f.out_amount)
            price = r.quoted(f.in_amount, f.out_amount)
            rows.append({
                "filled_at": f.filled_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
                "plan_name": r.plan_name, "source": f.source,
                "spent": None if spent is None else format(spent, "f"),
                "input_symbol": r.input_token.label if r.input_token else None,
                "received": None if got is None else format(got, "f"),
                "output_symbol": r.output_token.label if r.output_token else None,
                "price": None if price is None else format(price, "f"),
                "price_unit": r.price_unit(),
                "in_amount": str(f.in_amount), "out_amount": str(f.out_amount),
                "input_mint": f.input_mint, "output_mint": f.output_mint,
                "vs_reference_bps": None if (vs := f.vs_reference_bps) is None else str(vs),
                "signature": f.signature, "order_account": f.order_account,
                "run_id": f.run_id, "wallet": r.wallet,
            })  # fmt: skip
    rows.sort(key=lambda row: (row["filled_at"], row["run_id"]))
    return rows


def _bps(value: Any) -> str:
    return "-" if value is None else f"{value:+f}"


def plans_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        cells = []
        for column in CSV_COLUMNS:
            value = row.get(column)
            if column == "runs":
                value = ";".join(f"{k}={v}" for k, v in row["runs"].items())
            elif column == "fees":
                value = ";".join(f"{f['mint']}={f['amount']}" for f in row["fees"])
            cells.append("" if value is None else csv_cell(str(value)))  # a symbol "=…": text
        writer.writerow(cells)
    return buf.getvalue().rstrip("\n")
