"""`jupcron plans`: validate, apply and list order plans."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from jupcron.cli import params
from jupcron.cli.main import Context, pass_ctx
from jupcron.cli.output import format_option
from jupcron.config import DEFAULT_PATH, Config
from jupcron.errors import ConfigError, PlanError
from jupcron.plans.apply import NetworkChecks, apply_checked
from jupcron.plans.load import LoadedPlan, LoadResult, load_plans
from jupcron.plans.mints import check_mints, mints_of
from jupcron.plans.readers import MAX_WORKERS
from jupcron.products.recurring.minimums import (
    Lookups,
    check_recurring,
    lookups_from,
    needs_network,
)
from jupcron.report.listing import render
from jupcron.scheduling.schedule import next_fire_times, parse_instant, parse_schedule
from jupcron.store import migrate
from jupcron.store import plans as store_plans
from jupcron.store import status as store_status
from jupcron.store.engine import open_existing, session_factory, transaction
from jupcron.store.handle import reading
from jupcron.store.plansync import Names, Passed
from jupcron.store.records import PlanRecord
from jupcron.visible import visible

PATHS = params.GivenPath(path_type=Path)
now_option = click.option(
    "--now", "now_text", hidden=True, help="Pretend it is this time (ISO 8601, for tests)."
)


def _now(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)
    try:
        return parse_instant(text, what="--now")
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _warn(result: LoadResult) -> None:
    for warning in result.warnings:
        click.echo(str(warning), err=True)


class NeverFiring:
    """Plans whose schedule has no slot after `now` (an `at:` or `end:` already past):
    they are stored, and will never run; the first `SHOWN` as warnings, all counted.
    The next slot is worked out once per distinct schedule. An apply also tells it
    (`passed`) of the new plans whose fire time came after `now` but before their
    write: an `at:` plan's only one (it never runs either), or another's first
    (counted apart, in `late`)."""

    SHOWN = 100

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.found: list[str] = []
        self.count = 0
        self.late = 0  # plans whose first slot passed during the apply, run from the next
        self._fires: dict[tuple[tuple[str, Any], ...], bool] = {}

    def passed(self, found: Passed) -> None:
        where = f"{found.source}: warning: plan '{found.name}'"
        missed, stored = found.missed.isoformat(), found.stored_at.isoformat()
        if found.first is None:
            self.count += 1
            line = (
                f"{where} has no fire time after {stored}, when the apply stored it "
                f"({missed} passed while the apply ran): it will never run"
            )
        else:
            self.late += 1
            line = (
                f"{where} was stored at {stored} after its fire time {missed}, which passed "
                "while the apply ran: that one does not run (if it renames a plan, that "
                f"plan ran it); its first is {found.first.isoformat()}"
            )
        if len(self.found) < self.SHOWN:
            self.found.append(line)

    def look(self, plan: LoadedPlan) -> None:
        spec = plan.spec
        if not spec.enabled:
            return
        schedule = spec.schedule_dict()
        key = tuple(sorted(schedule.items()))  # to_dict's values are scalars
        fires = self._fires.get(key)
        if fires is None:
            fires = bool(next_fire_times(parse_schedule(schedule), self.now, 1))
            self._fires[key] = fires
        if fires:
            return
        self.count += 1
        if len(self.found) < self.SHOWN:
            self.found.append(
                f"{plan.source}:{plan.line}: warning: plan '{spec.name}' has no fire time "
                f"after {self.now.isoformat()} (its at/end is past): it will never run"
            )


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@click.group()
def plans() -> None:
    """Order plans: check files, sync them into the store, list them."""


offline_option = click.option(
    "--offline",
    is_flag=True,
    help="Skip the recurring checks that ask rpc.url (Token-2022) and the API (USD value).",
)


def _lookups(ctx: Context, offline: bool, *, need_config: bool) -> Lookups:
    if offline:
        return Lookups(no_owner="--offline", no_usd="--offline")
    if not need_config and ctx.config_path is None and not DEFAULT_PATH.exists():
        why = "no daemon config: give --config PATH to use its"
        return Lookups(no_owner=f"{why} rpc.url", no_usd=f"{why} API")
    return lookups_from(ctx.config)


def _wallets(ctx: Context) -> tuple[str, ...] | None:
    """The config's wallet names, which a plan's ``wallet`` must be one of; ``None``
    (not checked) when no config was given and none is installed."""
    if ctx.config_path is None and not DEFAULT_PATH.exists():
        return None
    return ctx.config.wallet_names()


def _check_minimums(
    ctx: Context,
    plans: list[LoadedPlan],
    offline: bool,
    *,
    need_config: bool = True,
    mints: list[LoadedPlan] | None = None,
) -> None:
    """Recurring minimums the schema cannot check offline, and mints that do not exist
    (`mints`: the plans whose mints to look up): notes on stderr, refusals as a
    `PlanError` (nothing is applied)."""
    mints = [p for p in mints or [] if mints_of(p)]
    if not plans and not mints:
        return
    lookups = _lookups(ctx, offline, need_config=need_config)
    try:
        findings = check_recurring(plans, lookups)
        missing = check_mints(mints, lookups)
    finally:
        lookups.close()
    for note in [*missing.notes, *findings.notes]:
        click.echo(str(note), err=True)
    if findings.problems or missing.problems:
        raise PlanError([*missing.problems, *findings.problems])


@plans.command()
@click.argument("paths", nargs=-1, required=True, type=PATHS)
@offline_option
@now_option
@pass_ctx
def validate(ctx: Context, paths: tuple[Path, ...], offline: bool, now_text: str | None) -> None:
    """Check plan files or folders; every problem as file:line:col: message.

    Warns (exit 0) as apply does about a plan with no fire time left, and
    suggests moving plans of unmaintained products (Recurring v1) to Trigger V2.
    Recurring plans with other inputs than USDC/USDT, or mints other than USDC,
    USDT and SOL, are checked against Jupiter's minimums through the daemon
    config's rpc.url and API when a config is given (or exists at the default path).
    """
    now = _now(now_text)
    result = load_plans(list(paths), _wallets(ctx))
    _warn(result)
    result.raise_for_problems()
    for suggestion in result.suggestions:
        click.echo(str(suggestion), err=True)
    never = NeverFiring(now)
    for plan in result.plans:
        never.look(plan)
    for warning in never.found:
        click.echo(warning, err=True)
    networked = [p for p in result.plans if needs_network(p)]
    _check_minimums(ctx, networked, offline, need_config=False, mints=result.plans)
    click.echo(f"ok: {_count(len(result.plans), 'plan')} in {_count(len(result.files), 'file')}")


@plans.command()
@click.argument("paths", nargs=-1, type=PATHS)
@click.option("--dry-run", is_flag=True, help="Show the changes without writing them.")
@click.option(
    "--jobs", "-j", type=click.IntRange(1, MAX_WORKERS + 1), default=1, show_default=True,
    help=f"Processes that read the plan files (up to {MAX_WORKERS + 1}): with 4 files or "
    "more, N-1 worker processes read them while this one writes the store (faster on "
    "several cores; each worker takes ~100 MB).",
)  # fmt: skip
@offline_option
@now_option
@pass_ctx
def apply(
    ctx: Context, paths: tuple[Path, ...], dry_run: bool, jobs: int, offline: bool,
    now_text: str | None,
) -> None:  # fmt: skip
    """Sync plan files or folders (default: plans.dir) into the store.

    Everything is validated first: one bad file and nothing changes. Plans
    whose file is gone are disabled, never deleted. Without PATH, plans.dir is
    the complete set: every plan not found there is disabled.
    """
    now = _now(now_text)
    targets = list(paths) or [ctx.config.plans.dir]
    own = Names(DRY_RUN_NAMED)  # enabled plans with dry_run: true (the last line names them)
    never = NeverFiring(now)
    has_rpc = bool(ctx.config.rpc.url)

    def restart() -> None:  # a pass over the files (a second one after network checks)
        nonlocal own, never
        own, never = Names(DRY_RUN_NAMED), NeverFiring(now)

    def each(plan: LoadedPlan) -> None:
        if plan.spec.enabled and plan.spec.dry_run:
            own.add(plan.spec.name)

    def fresh(plan: LoadedPlan) -> None:
        never.look(plan)

    def wanted(plan: LoadedPlan) -> bool:  # checked when added or changed, not every apply
        return plan.spec.enabled and (needs_network(plan) or (has_rpc and bool(mints_of(plan))))

    def ask(looked: list[LoadedPlan]) -> None:
        networked = [p for p in looked if needs_network(p)]
        _check_minimums(ctx, networked, offline, mints=looked)

    engine = open_existing(ctx.config.database.url)
    try:
        migrate.require_head(engine)
        factory = session_factory(engine)
        diff, loaded = apply_checked(
            factory, targets, checks=NetworkChecks(wanted, ask), restart=restart,
            now=now, dry_run=dry_run, complete=not paths, fresh=fresh, each=each,
            wallets=ctx.config.wallet_names(), workers=jobs - 1,
            folder=None if paths else ctx.config.plans.dir,
            passed=lambda found: never.passed(found),  # (this pass's `never`)
        )  # fmt: skip
    finally:
        engine.dispose()
    _warn(loaded)
    lines = diff.lines(fields=True)
    for line in lines[:MAX_LINES]:
        click.echo(visible(line))
    if len(lines) > MAX_LINES:
        click.echo(f"  … {len(lines) - MAX_LINES:,} more lines (the counts below are whole)")
    for warning in never.found:
        click.echo(warning, err=True)
    if never.count + never.late > len(never.found):
        left = never.count + never.late - len(never.found)
        what = "will never run" + (" or lost a fire time while the apply ran" if never.late
                                   else "")  # fmt: skip
        click.echo(f"warning: {left} more plans {what}", err=True)
    summary = (
        f"{diff.count('added')} added, {diff.count('changed')} changed, "
        f"{diff.count('disabled')} disabled, {diff.count('unchanged')} unchanged"
    )
    if dry_run:
        click.echo(f"dry run: {summary}; nothing written")
    else:
        click.echo(f"applied: {summary} (plans revision {diff.revision})")
    click.echo(_dry_run_line(ctx.config, own))


MAX_LINES = 2_000  # diff lines printed; a kind with more plans than SHOWN ends "… and N more"
DRY_RUN_NAMED = 50  # plans with dry_run: true named on the last line


def _dry_run_line(config: Config, own: Names) -> str:
    """What the config that was read says of signing: a daemon on the same file runs so."""
    where = config.source or "the built-in defaults"
    if config.safety.dry_run:
        return f"safety.dry_run: true in {where}: runs are ordered and checked, never signed"
    line = f"safety.dry_run: false in {where}: runs sign and send their orders"
    if own.count:
        named = ", ".join(own.kept)
        if own.count > len(own.kept):
            named += f" and {own.count - len(own.kept)} more"
        line += f" (except {_count(own.count, 'plan')} with dry_run: true: {named})"
    return line


def _row(plan: PlanRecord, last: str | None, now: datetime) -> dict[str, Any]:
    schedule = plan.schedule
    fires = next_fire_times(schedule, now, 3) if plan.enabled else []
    return {
        "name": plan.name,
        "kind": str(plan.kind),
        "version": plan.version,
        "schedule": schedule.describe(),
        "timezone": schedule.timezone,
        "enabled": plan.enabled,
        "last_status": last,
        "next_utc": [f.strftime("%Y-%m-%dT%H:%M:%SZ") for f in fires],
        "next_local": [f.astimezone(schedule.tz).isoformat() for f in fires],
    }


def _status(last: Any) -> str | None:
    return str(last.status) if last is not None else None


def _table_row(row: dict[str, Any]) -> dict[str, Any]:
    pairs = [
        f"{local[:19].replace('T', ' ')}{local[19:]} ({utc[11:19]}Z)"
        for local, utc in zip(row["next_local"], row["next_utc"], strict=True)
    ]
    return {
        **row,
        "enabled": "yes" if row["enabled"] else "no",
        "last_status": row["last_status"] or "-",
        "next (local, UTC)": ", ".join(pairs) or "-",
    }


# past any store's last plan (plans.id is 32 bits): a larger offset lists none alike,
# where SQLite and PostgreSQL refused a number beyond their 64-bit integers
OFFSET_MAX = 2**31 - 1


@plans.command("list")
@format_option
@click.option("--offset", type=click.IntRange(min=0, max=OFFSET_MAX, clamp=True), default=0,
              help="Skip this many plans.")  # fmt: skip
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many.")
@now_option
@pass_ctx
def list_(ctx: Context, fmt: str, offset: int, limit: int | None, now_text: str | None) -> None:
    """Plans with kind, schedule, last run status and the next three fire times
    (by name; --offset and --limit page through many)."""
    now = _now(now_text)
    rows: list[dict[str, Any]] = []
    # a reader: no write lock taken, none waited for (a daemon's, an apply's)
    with (
        reading(ctx.config.database.url) as engine,
        transaction(session_factory(engine)) as session,
    ):
        for records in store_plans.plans_in_pages(session, offset, limit):
            last = store_status.last_runs(session, [p.id for p in records])
            try:
                rows += [_row(p, _status(last.get(p.id)), now) for p in records]
            except ValueError as exc:  # a stored schedule this version cannot read
                raise ConfigError(f"a stored plan has an unreadable schedule: {exc}") from None
    if fmt == "table":
        columns = ["name", "kind", "schedule", "enabled", "last_status", "next (local, UTC)"]
        click.echo(render([_table_row(r) for r in rows], columns, fmt))
    elif fmt == "csv":
        flat = [
            {
                **r,
                "enabled": "yes" if r["enabled"] else "no",
                "next_utc": " ".join(r["next_utc"]),
                "next_local": " ".join(r["next_local"]),
            }
            for r in rows
        ]
        click.echo(render(flat, list(rows[0]) if rows else ["name"], fmt))
    else:
        columns = ["name", "kind", "version", "schedule", "timezone", "enabled",
                   "last_status", "next_utc", "next_local"]  # fmt: skip
        click.echo(render(rows, columns, fmt))
