"""`jupcron pause` and `jupcron resume`: the emergency stop that needs no
preparation. Stored in the database, so every daemon on it (leader and standby)
obeys within a second, with no config edit and no restart: a paused plan's slots
are recorded as `skipped`, with the reason."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import click

from jupcron.cli.main import Context, login_name, pass_ctx
from jupcron.cli.params import up_to
from jupcron.errors import ConfigError
from jupcron.store import control
from jupcron.store.control import PAUSES
from jupcron.store.engine import begin
from jupcron.store.handle import open_store
from jupcron.store.port import ALL_PLANS, Pause
from jupcron.store.status import when
from jupcron.urls import mask_url

names_argument = click.argument("names", nargs=-1, metavar="[NAME]...")


def _scopes(names: Sequence[str], all_plans: bool) -> list[str]:
    if all_plans and names:
        raise click.UsageError("give plan names or --all, not both")
    if not all_plans and not names:
        raise click.UsageError("give plan names, or --all")
    return [ALL_PLANS] if all_plans else list(dict.fromkeys(names))


def _label(scope: str) -> str:
    return "all plans" if scope == ALL_PLANS else scope


def _given(reason: str | None) -> str | None:
    """A reason of blanks alone is none given: ``--reason "$WHY"`` with WHY unset
    replaced (wiped) the reason a pause already had, which a pause without --reason keeps."""
    return reason if reason is not None and reason.strip() else None


def _check_known(unknown: list[str]) -> None:
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        raise ConfigError(
            f"no plan named {names} in the store (see 'jupcron plans list'); nothing changed"
        )


# the most `pauses.paused_by` keeps (a String(n))
PAUSED_BY_MAX: int = PAUSES.c.paused_by.type.length  # type: ignore[attr-defined]


def _pauser(by: str | None) -> str:
    """Who pauses: `--by` (checked already), else the login name cut to the column.
    The environment's $USER is nothing the operator typed here, and a pause must not
    fail on it: PostgreSQL refused a long one (the plans stayed unpaused)."""
    return by if by is not None else login_name()[:PAUSED_BY_MAX]


@click.command()
@names_argument
@click.option("--all", "all_plans", is_flag=True, help="Every plan, and plans added later.")
@click.option("--reason", help="Why: shown by 'jupcron status' and in each skipped run's error.")
@click.option(
    "--by",
    callback=up_to(PAUSED_BY_MAX),
    help="Who pauses (default: the login name).",
)
@pass_ctx
def pause(
    ctx: Context, names: tuple[str, ...], all_plans: bool, reason: str | None, by: str | None
) -> None:
    """Stop plans by NAME (or --all): their slots are recorded as skipped.

    Stored in the database, until 'jupcron resume': every daemon on it records
    their slots as `skipped` (with the reason) from within a second; runs
    already past ordering finish. A manual 'jupcron fire' of a paused plan is
    refused. An unknown NAME changes nothing (exit 1). Pausing again keeps the
    reason unless --reason gives a new one. Needs only the config's database
    section: a config with problems elsewhere is warned about, never a block.
    """
    scopes = _scopes(names, all_plans)
    reason = _given(reason)
    config = ctx.database_config()
    store = open_store(config)
    try:
        with begin(store.engine) as conn:
            _check_known(control.unknown_plans(conn, names))
            now = datetime.now(UTC)
            before = control.pause(conn, scopes, reason=reason, by=_pauser(by), now=now)
            running = [n.node for n in control.nodes(conn) if n.running(now)]
    finally:
        store.close()
    for scope, was in before.items():
        shown = reason
        note = ""
        if was is not None:
            kept = reason is None
            shown = was.reason if kept else reason
            what = "kept" if kept else "replaced"
            note = f" (paused already since {when(was.at)}: reason {what})"
        click.echo(f"paused {_label(scope)}: {shown or 'no reason given'}{note}")
    undo = "jupcron resume --all" if all_plans else f"jupcron resume {' '.join(scopes)}"
    click.echo(f"{_obeyed_by(running, config.database.url)}; undo with: {undo}")


def _obeyed_by(running: Sequence[str], url: str) -> str:
    """Who a pause reaches: the daemons whose heartbeat in this database is fresh. None
    is worth saying aloud: a pause written to another database than the daemon's (a
    second config, a config that did not load and whose database section was used)
    stops nothing, and the operator believes it did."""
    if running:
        return (
            f"{len(running)} daemon(s) running on this database ({', '.join(running)}) "
            "skip these slots from within a second"
        )
    return (
        f"no daemon is running on this database ({mask_url(url)}; no heartbeat in the "
        f"last {control.STALE_AFTER.seconds} s): one started on it skips these slots, but "
        "a daemon running now whose config names another database does not"
    )


@click.command()
@names_argument
@click.option("--all", "all_plans", is_flag=True, help="Undo 'pause --all'.")
@pass_ctx
def resume(ctx: Context, names: tuple[str, ...], all_plans: bool) -> None:
    """Resume paused plans by NAME (or --all): their next slots run again.

    'resume --all' lifts the every-plan pause only; plans paused by name stay
    paused (listed) until resumed by name. Resuming what is not paused says so
    and changes nothing.
    """
    scopes = _scopes(names, all_plans)
    store = open_store(ctx.database_config())
    try:
        with begin(store.engine) as conn:
            _check_known(control.unknown_plans(conn, names))
            lifted = {p.scope: p for p in control.resume(conn, scopes)}
            left = control.pauses(conn)
    finally:
        store.close()
    for scope in scopes:
        was = lifted.get(scope)
        if was is None:
            click.echo(f"{_label(scope)}: not paused")
        else:
            click.echo(f"resumed {_label(scope)} (paused {_since(was)})")
    for pause_left in left:
        undo = "--all" if pause_left.all_plans else pause_left.scope
        click.echo(
            f"still paused: {_label(pause_left.scope)} ({_since(pause_left)}; "
            f"jupcron resume {undo})"
        )


def _since(found: Pause) -> str:
    return f"by {found.by} at {when(found.at)}: {found.reason or 'no reason given'}"
