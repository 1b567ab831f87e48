"""`jupcron report`: per plan, runs by status, spent, received, average price,
fills, fees, first and last fill; optionally a chart. Read-only: it never
creates a database file."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from daemon.app import open_store
from daemon.cli.audit import When
from daemon.cli.main import Context, pass_ctx
from daemon.cli.output import format_option, render
from daemon.errors import StoreError
from daemon.report.build import PlanReport, build
from daemon.store import tokens

TABLE_COLUMNS = ("plan_name", "kind", "runs", "spent", "received", "average_price", "fills",
                 "refunded", "fees", "first_fill", "last_fill", "vs_reference_bps")  # fmt: skip
CSV_COLUMNS = ("plan_name", "kind", "input_mint", "output_mint", "runs", "spent", "spent_ui",
               "received", "received_ui", "refunded", "refunded_ui", "fills", "average_price",
               "average_cost", "fees", "first_fill", "last_fill", "reference_price",
               "vs_reference_bps")  # fmt: skip


def _amount(report: PlanReport, value: int, side: str, known: dict[str, tokens.Token]) -> str:
    token = report.input_token if side == "in" else report.output_token
    if token is None:
        return f"{value} (base units)" if value else "0"
    return f"{token.human(value):f} {token.label}"


def table_row(report: PlanReport, known: dict[str, tokens.Token]) -> dict[str, Any]:
    price = report.average_price()
    unit = ""
    if report.input_token and report.output_token:
        unit = f" {report.output_token.label}/{report.input_token.label}"
    fees = ", ".join(
        f"{tokens.human(amount, known[mint].decimals) if mint in known else amount:f} "
        f"{known[mint].label if mint in known else tokens.short(mint)}"
        for mint, amount in sorted(report.fees.items())
    )
    return {
        "plan_name": report.plan_name, "kind": report.kind,
        "runs": ", ".join(f"{status} {n}" for status, n in sorted(report.runs.items())) or "-",
        "spent": _amount(report, report.spent, "in", known),
        "received": _amount(report, report.received, "out", known),
        "average_price": f"{price:f}{unit}" if price is not None else "-",
        "fills": len(report.fills),
        "refunded": _amount(report, report.refunded, "in", known),
        "fees": fees or "-",
        "first_fill": report.first_fill.strftime("%Y-%m-%d %H:%M") if report.first_fill else "-",
        "last_fill": report.last_fill.strftime("%Y-%m-%d %H:%M") if report.last_fill else "-",
        "vs_reference_bps": _bps(report.vs_reference_bps()),
    }  # fmt: skip


def _bps(value: Any) -> str:
    return "-" if value is None else f"{value:+f}"


def _csv(rows: list[dict[str, Any]]) -> str:
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
            cells.append("" if value is None else str(value))
        writer.writerow(cells)
    return buf.getvalue().rstrip("\n")


@click.command()
@click.option("--plan", help="Only this plan.")
@click.option(
    "--since", type=When(), help="Fills and runs at or after (ISO 8601; UTC if no offset)."
)
@click.option("--until", type=When(), help="Fills and runs before (ISO 8601; UTC if no offset).")
@click.option("--chart", "chart", type=click.Path(path_type=Path, dir_okay=False),
              help="Also draw the fills over time to this .png or .svg file.")  # fmt: skip
@format_option
@pass_ctx
def report(
    ctx: Context, plan: str | None, since: datetime | None, until: datetime | None,
    chart: Path | None, fmt: str,
) -> None:  # fmt: skip
    """Per plan: runs, spent, received, average price, fills, fees."""
    if chart is not None:
        from daemon.report.chart import chart_format

        chart_format(chart)  # a wrong extension fails before anything is read
    if since is not None and until is not None and since >= until:
        raise click.BadParameter("--since must be before --until", param_hint="--since")
    store = open_store(ctx.config)  # never creates a database file
    try:
        with store.engine.connect() as conn:
            reports, known = build(conn, plan=plan, since=since, until=until)
    finally:
        store.close()
    if plan is not None and not reports:
        raise StoreError(f"no plan named {plan!r}")
    if fmt == "json":
        click.echo(json.dumps([r.as_dict(known) for r in reports], indent=2))
    elif fmt == "csv":
        click.echo(_csv([r.as_dict(known) for r in reports]))
    else:
        click.echo(render([table_row(r, known) for r in reports], TABLE_COLUMNS, "table"))
    if chart is not None:
        from daemon.report.chart import write_chart

        written = write_chart(reports, chart)
        click.echo(f"chart written to {written}", err=fmt != "table")
