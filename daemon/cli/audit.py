"""`jupcron audit`: the audit trail, filtered."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from daemon.app import open_store
from daemon.cli.main import Context, pass_ctx
from daemon.cli.output import format_option, render
from daemon.errors import ConfigError
from daemon.store.audit import AUDIT_COLUMNS, AuditFilter, audit_rows
from daemon.store.plans import get_plan
from daemon.store.types import PlanKind, RunStatus

TABLE_COLUMNS = (
    "run_id", "plan_name", "kind", "scheduled_for", "status", "request_id", "signature",
    "in_amount", "out_amount", "error",
)  # fmt: skip


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
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@click.command()
@click.option("--plan", help="Only this plan.")
@click.option("--status", type=click.Choice([str(s) for s in RunStatus]), help="Only this status.")
@click.option("--kind", type=click.Choice([str(k) for k in PlanKind]), help="Only this kind.")
@click.option("--since", type=When(), help="Scheduled at or after (ISO 8601; UTC if no offset).")
@click.option("--until", type=When(), help="Scheduled before (ISO 8601; UTC if no offset).")
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True)
@format_option
@pass_ctx
def audit(
    ctx: Context, plan: str | None, status: str | None, kind: str | None,
    since: datetime | None, until: datetime | None, limit: int, fmt: str,
) -> None:  # fmt: skip
    """The audit trail: one row per run, newest first (json and csv: every column of
    the audit view)."""
    store = open_store(ctx.config)
    try:
        with store.factory() as session:
            if plan is not None and get_plan(session, plan) is None:
                raise ConfigError(f"no plan named {plan!r} in the store (see 'jupcron plans list')")
            rows = audit_rows(session, AuditFilter(plan, status, kind, since, until, limit))
    finally:
        store.close()
    columns = TABLE_COLUMNS if fmt == "table" else AUDIT_COLUMNS
    if fmt == "table":
        for row in rows:
            for key in ("request_id", "signature"):
                if row.get(key) and len(row[key]) > 16:
                    row[key] = row[key][:8] + "…" + row[key][-6:]
    click.echo(render(rows, columns, fmt))
