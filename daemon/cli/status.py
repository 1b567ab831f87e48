"""`jupcron status`: is a daemon running (node, leader or standby, since when), is
dry run, a pause or the kill switch in effect, each plan's next fire time and
last result, the runway of each input mint (as the leader last read it), runs in
flight, `in_doubt` runs waiting for the operator, and the tz data release each
running daemon and this command read zones from (they must agree: `tz_data`).

Read-only: it opens the database as a reader (never creates a file, takes no
write lock) and exits 0 whenever it could read it, whatever it found (the JSON
says); 1 when it could not (no database, not migrated).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from jupcron.cli.main import Context, pass_ctx
from jupcron.config import Config
from jupcron.domain import DEFAULT_WALLET
from jupcron.plans.apply import FilesState, files_vs_store
from jupcron.report.listing import render
from jupcron.runner.killswitch import kill_switch
from jupcron.scheduling.zones import tz_data
from jupcron.store import status as store_status
from jupcron.store.control import STALE_AFTER, NodeBeat
from jupcron.store.engine import session_factory
from jupcron.store.handle import reading
from jupcron.store.port import Pause
from jupcron.store.runway import RunwayState, runway_text
from jupcron.store.status import SETTLE, Status, as_json, when
from jupcron.visible import visible


@click.command()
@click.option(
    "--format", "fmt", type=click.Choice(("table", "json")), default="table",
    show_default=True, help="Output format.",
)  # fmt: skip
@pass_ctx
def status(ctx: Context, fmt: str) -> None:
    """Is a daemon running, what is in effect, next fires, runs needing attention.

    The daemons (node, leader or standby, since when), dry run / pauses / kill
    switch in effect, each plan's next fire time and last result, the runway of
    each input mint (upcoming runs the balance covers), runs in flight,
    and in_doubt runs with their 'jupcron settle' command. Read-only; exit 0 if
    the database could be read (1 if not)."""
    config = ctx.config
    with reading(config.database.url) as engine, session_factory(engine)() as session:
        found = store_status.read(session, datetime.now(UTC))
        files = files_vs_store(session, config.plans.dir, config.wallet_names())
    here = {"dry_run": config.safety.dry_run, "kill_switch": kill_switch(config)}
    if fmt == "json":
        data = {**as_json(found), "config": here, "plan_files": files.as_json()}
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(table(found, config, files))


def _node_line(node: NodeBeat, found: Status) -> str:
    if not node.running(found.now):
        return f"{node.node}  not running (last heartbeat {when(node.last_beat)})"
    line = (
        f"{node.node}  {node.role} since {when(node.role_since)}  "
        f"(started {when(node.started_at)}, version {node.version})"
    )
    if node.wallets is not None:  # the wallets it leads (shared on PostgreSQL)
        line += f"  wallets: {', '.join(node.wallets) or 'none'}"
    return f"{line}  DEGRADED: {node.degraded}" if node.degraded else line


def _tz_line(found: Status) -> str:
    tz = tz_data((n.node, n.version) for n in found.running)
    if not tz["differ"]:
        where = "here and on every running daemon" if tz["nodes"] else "here"
        return f"{tz['here']} (tzdata package) {where}"
    nodes = ", ".join(f"{node} {version}" for node, version in tz["nodes"].items())
    return (
        f"DIFFER: {tz['here']} here; {nodes}: a zone read otherwise gives a plan other "
        "slots (a fire twice in a day, or none): install one tzdata release everywhere"
    )


def _pause_line(pause: Pause) -> str:
    what, undo = ("all plans", "--all") if pause.all_plans else (pause.scope, pause.scope)
    return (
        f"{what} since {when(pause.at)} by {pause.by}: {pause.reason or 'no reason given'} "
        f"(jupcron resume {undo})"
    )


def _safety(found: Status, config: Config) -> list[tuple[str, str]]:
    running = found.running
    if running:
        dry = [n.node for n in running if n.dry_run]
        dry_text = f"on ({', '.join(dry)})" if dry else "off"
        kills = [f"{n.kill_switch} ({n.node})" for n in running if n.kill_switch]
        kill_text = "; ".join(kills) if kills else "off"
    else:  # no daemon to ask: what this config file says
        dry_text = ("on" if config.safety.dry_run else "off") + " (this config file)"
        kill = kill_switch(config)
        kill_text = (f"ON: {kill}" if kill else "off") + " (this config file)"
    paused = [_pause_line(p) for p in found.pauses] or ["none"]
    rows = [("dry run", dry_text), ("kill switch", kill_text), ("paused", paused[0])]
    return rows + [("", more) for more in paused[1:]]


RUNWAY_COLUMNS = ["wallet", "token", "balance", "runway", "plans", "checked"]


def _runway_row(state: RunwayState) -> dict[str, str]:
    r = state.runway
    return {
        "wallet": r.wallet, "token": state.label,
        "balance": state.amount(r.balance) or "unknown", "runway": runway_text(state),
        "plans": ", ".join(r.plans), "checked": when(state.checked_at) or "",
    }  # fmt: skip


def table(found: Status, config: Config, files: FilesState | None = None) -> str:
    """The status for people: a head of `label  value` lines, then the tables."""
    daemons = [_node_line(n, found) for n in found.daemons]
    if not found.running:
        stale = int(STALE_AFTER.total_seconds())
        daemons.insert(0, f"none running (no heartbeat in the last {stale} s)")
    head = [("daemon", daemons[0]), *(("", more) for more in daemons[1:])]
    head.append(("tz data", _tz_line(found)))
    head += _safety(found, config)
    if files is not None:
        head.append(("plan files", files.text()))
    width = max(len(label) for label, _ in head)
    lines = [f"{label.ljust(width)}  {visible(value)}" for label, value in head]
    several = any(p.wallet != DEFAULT_WALLET for p in found.plans) or any(
        r.wallet != DEFAULT_WALLET for r in (*found.in_flight.runs, *found.in_doubt.runs)
    )  # more wallets than the default one: each plan and run says whose it is
    plans = [
        {
            "plan": p.name, "kind": p.kind, "wallet": p.wallet,
            "next_fire": when(p.next_fire) or ("-" if p.enabled else "disabled"),
            "paused": "all" if p.pause and p.pause.all_plans else ("yes" if p.pause else ""),
            "last_status": str(p.last.status) if p.last else "-",
            "last_slot": when(p.last.scheduled_for) if p.last else "",
            "last_error": p.last.error if p.last else "",
        }
        for p in found.plans
    ]  # fmt: skip
    columns = ["plan", "kind", "next_fire", "paused", "last_status", "last_slot", "last_error"]
    if several:
        columns.insert(1, "wallet")
    lines += ["", f"plans ({found.plans_count})", render(plans, columns, "table")]
    if found.plans_count > len(plans):
        lines.append(f"… {found.plans_count - len(plans):,} more (jupcron plans list shows all)")
    lines += [
        "",
        f"runway ({len(found.runways)}, per wallet and input mint)",
        render([_runway_row(r) for r in found.runways], RUNWAY_COLUMNS, "table"),
    ]
    run_columns = ["run_id", "plan_name", "status", "scheduled_for", "trigger", "signature"]
    if several:
        run_columns.insert(2, "wallet")
    flight = [store_status.run_json(r) for r in found.in_flight.runs]
    lines += ["", f"in flight ({found.in_flight.count})", render(flight, run_columns, "table")]
    doubt = [store_status.run_json(r) for r in found.in_doubt.runs]
    lines += ["", f"in doubt ({found.in_doubt.count})"]
    if doubt:
        lines.append("look each signature up on-chain, then record it: " + SETTLE.format(
            run_id="RUN_ID"))  # fmt: skip
    doubt_columns = [c for c in run_columns if c not in ("trigger", "signature")]
    lines.append(render(doubt, [*doubt_columns, "signature", "error"], "table"))
    return "\n".join(lines)
