"""`jupcron report`: per plan, runs by status, spent, received, average price,
fills, fees, first and last fill; optionally a chart. Read-only: it never
creates a database file, nor takes the write lock."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import click

from jupcron.cli import params
from jupcron.cli.audit import When, check_span
from jupcron.cli.main import Context, pass_ctx
from jupcron.cli.output import format_option
from jupcron.errors import StoreError
from jupcron.report.build import build, not_found
from jupcron.report.listing import render
from jupcron.report.rows import (
    FILL_COLUMNS,
    TABLE_COLUMNS,
    TOTAL_CSV,
    fill_rows,
    plans_csv,
    table_row,
    total_lines,
    totals,
)
from jupcron.store.audit import unknown_wallet
from jupcron.store.handle import reading


@click.command()
@click.option("--plan", help="Only this plan.")
@click.option(
    "--wallet",
    metavar="NAME",
    callback=params.wallet_name,
    help="Only the runs of this wallet (its config name), whatever their plans name now.",
)
@click.option(
    "--since", type=When(), help="Fills and runs at or after (ISO 8601; UTC if no offset)."
)
@click.option("--until", type=When(), help="Fills and runs before (ISO 8601; UTC if no offset).")
@click.option("--chart", "chart", type=params.GivenPath(path_type=Path, dir_okay=False),
              help="Also draw the fills over time to this .png or .svg file.")  # fmt: skip
@click.option(
    "--fills",
    "fills",
    is_flag=True,
    help="One row per fill instead (with --format csv: a spreadsheet's file).",
)
@click.option(
    "--total",
    "total",
    is_flag=True,
    help="Only the totals over every plan (per token, fees, value now).",
)
@format_option
@pass_ctx
def report(
    ctx: Context, plan: str | None, wallet: str | None, since: datetime | None,
    until: datetime | None, chart: Path | None, fills: bool, total: bool, fmt: str,
) -> None:  # fmt: skip
    """Per plan: runs, spent, received, average price (quote per base: USDC per SOL),
    fills, refunds, fees (Jupiter's, and the network's in SOL), value now and
    unrealised P&L; then the totals."""
    if chart is not None:
        from jupcron.report.chart import chart_format

        chart_format(chart)  # a wrong extension fails before anything is read
    check_span(since, until)
    # a long report never holds up the daemon's writes, nor waits for them
    with reading(ctx.config.database.url) as engine, engine.connect() as conn:
        reports, known = build(conn, plan=plan, since=since, until=until, wallet=wallet)
        if plan is not None and not reports:  # says which wallet the plan names
            raise StoreError(not_found(conn, plan, wallet))
        if wallet is not None and not reports:
            problem = unknown_wallet(conn, wallet, ctx.config.wallet_names())
            if problem is not None:
                raise StoreError(problem)
    if fills:
        click.echo(render(fill_rows(reports), FILL_COLUMNS, fmt))
    elif total:
        summed = totals(reports, known)
        if fmt == "table":
            click.echo(total_lines(summed))
        elif fmt == "json":
            click.echo(json.dumps(summed, indent=2))
        else:
            click.echo(render(summed["tokens"], TOTAL_CSV, "csv"))
    elif fmt == "json":
        click.echo(json.dumps([r.as_dict(known) for r in reports], indent=2))
    elif fmt == "csv":
        click.echo(plans_csv([r.as_dict(known) for r in reports]))
    else:
        click.echo(render([table_row(r, known) for r in reports], TABLE_COLUMNS, "table"))
        if len(reports) > 1:
            click.echo("\n" + total_lines(totals(reports, known)))
    if chart is not None:
        from jupcron.report.chart import write_chart

        written = write_chart(reports, chart)
        click.echo(f"chart written to {written}", err=fmt != "table")
