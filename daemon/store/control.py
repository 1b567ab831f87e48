"""Operators' pauses and the daemons' heartbeats: the one way into the tables of
migration 0004_control. Functions take a connection and return frozen values.

    jupcron pause NAME|--all ─► pause()      one row per scope (a plan, or "*")
    jupcron resume           ─► resume()     deletes the rows
    the runner's pre-flight  ─► pauses()     (cached by the run store, `PAUSE_TTL`)
    every daemon, every BEAT ─► beat()       upsert of its row; forget_node() at a clean stop
    jupcron status           ─► nodes()      with `NodeBeat.running(now)`
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Connection, Table, delete, select

from jupcron.store.engine import dialect_insert
from jupcron.store.models import DaemonNode, PauseRow, Plan
from jupcron.store.port import ALL_PLANS, Pause

PAUSES = cast(Table, PauseRow.__table__)
NODES = cast(Table, DaemonNode.__table__)

BEAT = 2.0  # seconds between a daemon's heartbeats
STALE_AFTER = timedelta(seconds=10)  # a row older than this: that daemon is not running
FORGET_AFTER = timedelta(days=1)  # rows of daemons gone without a clean stop are removed


@dataclass(frozen=True)
class NodeBeat:
    """One daemon as its last heartbeat described it."""

    node: str  # host:pid
    role: str  # leader | standby
    role_since: datetime
    started_at: datetime
    last_beat: datetime
    dry_run: bool  # safety.dry_run of the config it runs with now
    kill_switch: str | None  # why runs are skipped, while the kill switch is on
    version: str
    # what it runs without: "rpc: … did not answer" (None: nothing)
    degraded: str | None = None
    # the wallets it leads (several daemons on PostgreSQL share them); None: not said
    wallets: tuple[str, ...] | None = None

    def running(self, now: datetime) -> bool:
        """Its last beat is recent: the daemon is alive (a crashed one stops beating)."""
        return now - self.last_beat <= STALE_AFTER


def _insert(conn: Connection) -> Any:
    return dialect_insert(conn.dialect.name)


def _pause(row: Any) -> Pause:
    return Pause(scope=row.scope, reason=row.reason, by=row.paused_by, at=row.paused_at)


def pauses(conn: Connection) -> list[Pause]:
    """Every pause in effect, every-plan first, then by plan name."""
    found = [_pause(r) for r in conn.execute(select(PAUSES).order_by(PAUSES.c.scope))]
    return sorted(found, key=lambda p: (not p.all_plans, p.scope))


def pause(
    conn: Connection, scopes: Sequence[str], *, reason: str | None, by: str, now: datetime
) -> dict[str, Pause | None]:
    """Pause each scope (a plan name, or `ALL_PLANS`); a pause already there is replaced
    (the newest reason counts; with no new reason it keeps its own). What each scope
    had before (``None``: not paused)."""
    before = {p.scope: p for p in pauses(conn) if p.scope in scopes}
    stmt = _insert(conn)(PAUSES)
    stmt = stmt.on_conflict_do_update(
        index_elements=["scope"],
        set_={"reason": stmt.excluded.reason, "paused_by": stmt.excluded.paused_by,
              "paused_at": stmt.excluded.paused_at},
    )  # fmt: skip
    rows = [
        {"scope": s, "reason": reason if reason is not None else _kept(before.get(s)),
         "paused_by": by, "paused_at": now}
        for s in scopes
    ]  # fmt: skip
    if rows:
        conn.execute(stmt, rows)
    return {scope: before.get(scope) for scope in scopes}


def _kept(was: Pause | None) -> str | None:
    return was.reason if was is not None else None


def resume(conn: Connection, scopes: Iterable[str]) -> list[Pause]:
    """Remove the pauses of these scopes; the ones there were."""
    wanted = list(scopes)
    there = [p for p in pauses(conn) if p.scope in wanted]
    if there:
        conn.execute(delete(PAUSES).where(PAUSES.c.scope.in_([p.scope for p in there])))
    return there


def unknown_plans(conn: Connection, names: Iterable[str]) -> list[str]:
    """The names no plan in the store has, in the order given."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return []
    known = set(conn.scalars(select(Plan.name).where(Plan.name.in_(wanted))))
    return [n for n in wanted if n not in known]


def pause_in_effect(found: Iterable[Pause], plan_name: str) -> Pause | None:
    """The plan's own pause, else the every-plan one, else ``None``."""
    by_scope = {p.scope: p for p in found}
    return by_scope.get(plan_name) or by_scope.get(ALL_PLANS)


def beat(conn: Connection, node: NodeBeat) -> None:
    """Write the daemon's row (insert or update), and drop rows long stale."""
    values = {
        "node": node.node, "role": node.role, "role_since": node.role_since,
        "started_at": node.started_at, "last_beat": node.last_beat, "dry_run": node.dry_run,
        "kill_switch": node.kill_switch, "version": node.version, "degraded": node.degraded,
        "wallets": None if node.wallets is None else list(node.wallets),
    }  # fmt: skip
    stmt = _insert(conn)(NODES).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=["node"], set_={k: v for k, v in values.items() if k != "node"}
    )
    conn.execute(stmt)
    conn.execute(delete(NODES).where(NODES.c.last_beat < node.last_beat - FORGET_AFTER))


def _node(row: dict[str, Any]) -> NodeBeat:
    wallets = row.pop("wallets", None)
    return NodeBeat(**row, wallets=None if wallets is None else tuple(wallets))


def forget_node(conn: Connection, node: str) -> None:
    """A clean stop: the daemon's row goes."""
    conn.execute(delete(NODES).where(NODES.c.node == node))


def nodes(conn: Connection) -> list[NodeBeat]:
    """Every daemon's last heartbeat: the leader first, then by node."""
    rows = conn.execute(select(NODES).order_by(NODES.c.node))
    found = [_node(dict(r._mapping)) for r in rows]
    return sorted(found, key=lambda n: (n.role != "leader", n.node))
