"""`jupcron audit`: the audit trail, filtered."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import click

from jupcron.cli import params
from jupcron.cli.main import Context, pass_ctx
from jupcron.cli.output import format_option
from jupcron.domain import DEFAULT_WALLET, PlanKind, RunStatus
from jupcron.errors import ConfigError
from jupcron.report.listing import render
from jupcron.store import tokens
from jupcron.store.audit import AUDIT_COLUMNS, AuditFilter, audit_rows, unknown_wallet
from jupcron.store.engine import session_factory
from jupcron.store.handle import reading
from jupcron.store.plans import get_plan

TABLE_COLUMNS = (
    "run_id", "plan_name", "kind", "scheduled_for", "status", "request_id", "signature",
    "in", "out", "error",
)  # fmt: skip
# json and csv: every column of the audit view (base units), then the same in token units
UNIT_COLUMNS = ("input_symbol", "in_amount_ui", "output_symbol", "out_amount_ui")


def with_units(row: dict[str, Any], known: Mapping[str, tokens.Token]) -> dict[str, Any]:
    """The run's amounts in token units beside its base units: ``in``/``out`` as a
    person reads them (``5 USDC``), and symbol and decimal-string columns for machines.
    A mint whose decimals are not known keeps its base units, said so."""
    sides = (("in", "input", "input_mint", "in_amount"),
             ("out", "output", "output_mint", "out_amount"))  # fmt: skip
    for side, prefix, mint_key, amount_key in sides:
        mint, amount = row.get(mint_key), row.get(amount_key)
        token = known.get(mint) if isinstance(mint, str) else None
        text = str(amount) if amount is not None else ""
        value = int(text) if text.isdigit() else None
        row[f"{prefix}_symbol"] = token.label if token else None
        row[f"{amount_key}_ui"] = (
            tokens.plain(token.human(value)) if token and value is not None else None
        )
        if value is None:
            row[side] = None
        elif token is None:
            row[side] = f"{value} (base units)"
        else:
            row[side] = token.show(value)
    return row


class When(click.ParamType):  # type: ignore[type-arg]
    name = "when"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            parsed = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 date or time", param, ctx)
        try:  # the store compares instants in UTC
            return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        except OverflowError:
            self.fail(f"{value!r} is outside the calendar in UTC", param, ctx)


def check_span(since: datetime | None, until: datetime | None) -> None:
    """Refuse a span that ends before (or as) it starts: it matches nothing, and an
    empty answer reads as "no such runs" (`audit` and `report` alike)."""
    if since is not None and until is not None and since >= until:
        raise click.BadParameter("--since must be before --until", param_hint="--since")


@click.command()
@click.option("--plan", help="Only this plan.")
@click.option("--status", type=click.Choice([str(s) for s in RunStatus]), help="Only this status.")
@click.option("--kind", type=click.Choice([str(k) for k in PlanKind]), help="Only this kind.")
@click.option("--since", type=When(), help="Scheduled at or after (ISO 8601; UTC if no offset).")
@click.option("--until", type=When(), help="Scheduled before (ISO 8601; UTC if no offset).")
@click.option("--wallet", metavar="NAME", callback=params.wallet_name,
              help="Only the runs of this wallet (its config name).")  # fmt: skip
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True)
@format_option
@pass_ctx
def audit(
    ctx: Context, plan: str | None, status: str | None, kind: str | None,
    since: datetime | None, until: datetime | None, wallet: str | None, limit: int, fmt: str,
) -> None:  # fmt: skip
    """The audit trail: one row per run, newest first (json and csv: every column of
    the audit view; the table names each run's wallet when there is more than the
    default one)."""
    check_span(since, until)
    with reading(ctx.config.database.url) as engine, session_factory(engine)() as session:
        if plan is not None and get_plan(session, plan) is None:
            raise ConfigError(f"no plan named {plan!r} in the store (see 'jupcron plans list')")
        flt = AuditFilter(plan, status, kind, since, until, limit, wallet=wallet)
        rows = audit_rows(session, flt)
        if wallet is not None and not rows:
            problem = unknown_wallet(session.connection(), wallet, ctx.config.wallet_names())
            if problem is not None:
                raise ConfigError(problem)
        known = tokens.known(session)
    rows = [with_units(row, known) for row in rows]
    columns = TABLE_COLUMNS if fmt == "table" else (*AUDIT_COLUMNS, *UNIT_COLUMNS)
    if fmt == "table" and (wallet or any(r.get("wallet") != DEFAULT_WALLET for r in rows)):
        columns = (*columns[:2], "wallet", *columns[2:])  # several wallets: say whose
    if fmt == "table":
        for row in rows:
            for key in ("request_id", "signature"):
                if row.get(key) and len(row[key]) > 16:
                    row[key] = row[key][:8] + "…" + row[key][-6:]
    click.echo(render(rows, columns, fmt))
