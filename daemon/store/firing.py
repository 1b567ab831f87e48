"""The scheduler's reads and writes of ``plans.next_fire`` / ``plans.fire_version``
(0011_next_fire): the plans due next, a page at a time in (next_fire, id) order,
instead of a job per plan in memory.

``next_fire`` is the first slot of version ``fire_version`` not yet fired or
recorded, never later than it (a lower bound: a lost write only means the slot is
settled again at the next start, where the runs' unique (plan, slot) key makes a
repeat harmless); NULL once no slot is left. `plans apply` writes a new plan settled
(``fire_version`` = ``version`` = 1, its first slot stored), so a daemon starting on
100,000 new plans rewrites none of them; a reload finds the added ones by id.
``fire_version`` NULL: added by an apply from before that, adopted as it is; behind
``version`` (0: a plan from before 0011): changed since, settled plan by plan.

A daemon that leads some wallets only (shards) filters the plans it reads with its
own predicate: the reads here are keyset pages, so a page of other daemons' plans is
passed over, never read again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import Any, NamedTuple, cast

from sqlalchemy import Connection, Select, Table, and_, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from jupcron.store.bulk import update_rows
from jupcron.store.models import Plan, PlanVersion, Run
from jupcron.store.plans import PLAN_COLUMNS, StoredVersion
from jupcron.store.records import PlanRecord
from jupcron.store.types import UTCDateTime

PLANS = cast(Table, Plan.__table__)
RUNS = cast(Table, Run.__table__)
VERSIONS = cast(Table, PlanVersion.__table__)
Cursor = tuple[datetime, int]  # (next_fire, id): the last plan read
Conn = Connection | Session


_SETTLED = and_(PLANS.c.fire_version == PLANS.c.version, PLANS.c.enabled.is_(True))


def _records(conn: Conn, stmt: Select[Any]) -> list[PlanRecord]:
    out = []
    for row in conn.execute(stmt):
        try:
            out.append(PlanRecord.from_mapping(row._mapping))
        except ValueError:
            continue  # unreadable: `plans apply` never stores one (store_plans logs it)
    return out


def due_page(
    conn: Conn, after: Cursor | None, before: datetime, limit: int
) -> list[tuple[PlanRecord, datetime]]:
    """Settled enabled plans with ``next_fire`` after `after` (keyset) and before
    `before`, in (next_fire, id) order: each with its ``next_fire``."""
    stmt = select(*PLAN_COLUMNS, PLANS.c.next_fire).where(
        _SETTLED, PLANS.c.next_fire.is_not(None), PLANS.c.next_fire < before
    )
    stmt = _after(stmt, after).order_by(PLANS.c.next_fire, PLANS.c.id).limit(limit)
    rows = list(conn.execute(stmt))
    by_id = {r.id: r.next_fire for r in rows}
    return [(p, by_id[p.id]) for p in _records_of(rows)]


def _records_of(rows: Iterable[Any]) -> list[PlanRecord]:
    out = []
    for row in rows:
        try:
            out.append(PlanRecord.from_mapping(row._mapping))
        except ValueError:
            continue
    return out


def _after(stmt: Any, after: Cursor | None) -> Any:
    """Keyset: the plans after (next_fire, id) `after`."""
    if after is None:
        return stmt
    slot, pid = after
    return stmt.where(
        or_(PLANS.c.next_fire > slot, and_(PLANS.c.next_fire == slot, PLANS.c.id > pid))
    )


def missed_page(
    conn: Conn, now: datetime, limit: int, after: Cursor | None = None
) -> list[tuple[PlanRecord, datetime]]:
    """Settled enabled plans whose ``next_fire`` is at or before `now` (the daemon was
    down, or they were late): the oldest first, after `after`, with their next_fire."""
    stmt = select(*PLAN_COLUMNS, PLANS.c.next_fire).where(_SETTLED, PLANS.c.next_fire <= now)
    stmt = _after(stmt, after).order_by(PLANS.c.next_fire, PLANS.c.id).limit(limit)
    rows = list(conn.execute(stmt))
    by_id = {r.id: r.next_fire for r in rows}
    return [(p, by_id[p.id]) for p in _records_of(rows)]


def wallets_settled(conn: Conn) -> list[PlanRecord]:
    """One settled enabled plan of each wallet (the first by id): a daemon that leads
    some wallets asks its predicate once a wallet, not once a plan."""
    first = select(func.min(PLANS.c.id)).where(_SETTLED).group_by(PLANS.c.wallet)
    return _records(conn, select(*PLAN_COLUMNS).where(PLANS.c.id.in_(first.scalar_subquery())))


def ids_of(conn: Conn, wallets: Collection[str]) -> set[int]:
    """The settled enabled plans of these wallets."""
    if not wallets:
        return set()
    stmt = select(PLANS.c.id).where(_SETTLED, PLANS.c.wallet.in_(list(wallets)))
    return {pid for (pid,) in conn.execute(stmt)}


def plans_by_id(conn: Conn, ids: Collection[int]) -> list[PlanRecord]:
    return _records(conn, select(*PLAN_COLUMNS).where(PLANS.c.id.in_(list(ids))))


def added_since(conn: Conn, after: int | None, limit: int = 1000) -> tuple[list[str], int, int]:
    """Plans added since a reload saw plan ids up to `after` (`plans apply` writes a new
    plan settled, at its first slot): (the first `limit` enabled ones' names, how many,
    the highest plan id now). `after` None (the first load): only the highest id. The
    highest id is read first and bounds the count: applies run one after another (the
    revision row's lock), so a plan committed after that read has a higher id."""
    top = int(conn.execute(select(func.coalesce(func.max(PLANS.c.id), 0))).scalar_one())
    if after is None or top <= after:
        return [], 0, top
    new = and_(_SETTLED, PLANS.c.id > after, PLANS.c.id <= top)
    count = int(conn.execute(select(func.count()).select_from(PLANS).where(new)).scalar_one())
    names = [n for (n,) in conn.execute(select(PLANS.c.name).where(new)
                                         .order_by(PLANS.c.name).limit(limit))]  # fmt: skip
    return names, count, top


def adopt(conn: Conn, limit: int = 1000) -> tuple[list[str], int]:
    """Plans an apply from before settled-at-birth left unadopted (``fire_version`` NULL,
    their first slot stored) become settled as they are; (the first `limit` enabled
    ones' names, how many were enabled)."""
    new: Any = PLANS.c.fire_version.is_(None)
    enabled = and_(new, PLANS.c.enabled.is_(True))
    count = int(conn.execute(select(func.count()).select_from(PLANS).where(enabled)).scalar_one())
    names = [n for (n,) in conn.execute(select(PLANS.c.name).where(enabled)
                                         .order_by(PLANS.c.name).limit(limit))]  # fmt: skip
    conn.execute(update(PLANS).where(new).values(fire_version=PLANS.c.version))
    return names, count


Changed = tuple[PlanRecord, int, datetime | None]  # (plan, version settled, its next_fire)


class ChangedPage(NamedTuple):
    """A page of plans changed since the scheduler settled them: the readable ones,
    the unreadable ones ({id: version}: settled as having no slot, by the caller's
    writer: the page is read by a reader, which cannot write), and the last id read
    (None: no plan left)."""

    plans: list[Changed]
    unreadable: dict[int, int]
    last: int | None


def changed_page(conn: Conn, limit: int, after: int = 0) -> ChangedPage:
    """Plans changed (or disabled) since the scheduler settled them, by id after `after`,
    with the version and ``next_fire`` it had settled (0: a plan from before 0011)."""
    stmt = select(*PLAN_COLUMNS, PLANS.c.fire_version, PLANS.c.next_fire).where(
        PLANS.c.fire_version.is_not(None), PLANS.c.fire_version != PLANS.c.version,
        PLANS.c.id > after,
    )  # fmt: skip
    rows = list(conn.execute(stmt.order_by(PLANS.c.id).limit(limit)))
    out, unreadable = [], {}
    for row in rows:
        try:
            record = PlanRecord.from_mapping(row._mapping)
        except ValueError:  # unreadable: settled as having no slot
            unreadable[row.id] = row.version
            continue
        out.append((record, int(row.fire_version), row.next_fire))
    return ChangedPage(out, unreadable, rows[-1].id if rows else None)


def versions_from(conn: Conn, settled: Mapping[int, int]) -> dict[int, list[StoredVersion]]:
    """Each plan's versions from the one the scheduler settled on ({id: that version}),
    oldest first, in one query for a page of changed plans (a transaction a plan made
    settling 10,000 changed plans take 18 s on SQLite). Read from the page's lowest
    settled version on and kept from each plan's own: versions are never rewritten."""
    if not settled:
        return {}
    rows = conn.execute(
        select(VERSIONS.c.plan_id, VERSIONS.c.version, VERSIONS.c.content,
               VERSIONS.c.enabled, VERSIONS.c.created_at)
        .where(VERSIONS.c.plan_id.in_(list(settled)),
               VERSIONS.c.version >= min(settled.values()))
        .order_by(VERSIONS.c.plan_id, VERSIONS.c.version)
    )  # fmt: skip
    out: dict[int, list[StoredVersion]] = {}
    for pid, version, content, enabled, created_at in rows:
        if version >= settled[pid]:
            out.setdefault(pid, []).append(StoredVersion(version, dict(content), enabled,
                                                         created_at))  # fmt: skip
    return out


def set_next(
    conn: Conn, slots: Mapping[int, tuple[datetime | None, int]], *, settle: bool = False
) -> None:
    """Store each plan's next slot: {id: (slot, version)}. With `settle`, the plan becomes
    settled at that version; without, the slot is written only while the plan is still
    settled at it (a plan changed meanwhile keeps its old version's slot for the reload).
    A reload's page (`settle`, in a session) is written by `update_rows`: one statement
    on PostgreSQL, where the driver's executemany spends ~0.1 ms of Python a row."""
    if not slots:
        return
    if settle and isinstance(conn, Session):  # a reload's page: one statement on PostgreSQL
        update_rows(conn, PLANS, "id", [{"id": pid, "next_fire": slot, "fire_version": version}
                                        for pid, (slot, version) in slots.items()])  # fmt: skip
        return
    stmt = update(PLANS).where(PLANS.c.id == _bind("b_id"))
    if settle:
        stmt = stmt.values(next_fire=_bind("b_next"), fire_version=_bind("b_version"))
    else:
        stmt = stmt.where(PLANS.c.fire_version == _bind("b_version")).values(
            next_fire=_bind("b_next"))  # fmt: skip
    conn.execute(stmt, [{"b_id": pid, "b_next": slot, "b_version": version}
                        for pid, (slot, version) in slots.items()])  # fmt: skip


def _bind(name: str) -> Any:
    return bindparam(name, type_=UTCDateTime()) if name == "b_next" else bindparam(name)


def next_fires(
    conn: Conn, limit: int | None = None, include: Callable[[PlanRecord], bool] | None = None
) -> dict[str, datetime]:
    """Each settled enabled plan's next slot by name, soonest first (`limit` of them;
    only those `include` lets through)."""
    if include is None:
        stmt = select(PLANS.c.name, PLANS.c.next_fire)
    else:
        stmt = select(*PLAN_COLUMNS, PLANS.c.next_fire)
    stmt = stmt.where(_SETTLED, PLANS.c.next_fire.is_not(None))
    stmt = stmt.order_by(PLANS.c.next_fire, PLANS.c.id)
    found: dict[str, datetime] = {}
    for row in conn.execute(stmt):
        if include is not None:
            try:
                if not include(PlanRecord.from_mapping(row._mapping)):
                    continue
            except ValueError:
                continue
        found[row.name] = row.next_fire
        if limit is not None and len(found) >= limit:
            break
    return found


def stored_next(conn: Conn, plan_ids: Collection[int]) -> dict[int, datetime]:
    """These plans' stored next slots (``next_fire``), where they have one."""
    if not plan_ids:
        return {}
    rows = conn.execute(select(PLANS.c.id, PLANS.c.next_fire).where(
        PLANS.c.id.in_(list(plan_ids)), PLANS.c.next_fire.is_not(None)))  # fmt: skip
    return {pid: slot for pid, slot in rows}


def last_slots(conn: Conn, plan_ids: Collection[int]) -> dict[int, datetime]:
    """These plans' latest scheduled (not manual) slots, in one query."""
    if not plan_ids:
        return {}
    latest = func.max(RUNS.c.scheduled_for, type_=UTCDateTime())
    rows = conn.execute(
        select(RUNS.c.plan_id, latest)
        .where(RUNS.c.trigger != "manual", RUNS.c.plan_id.in_(list(plan_ids)))
        .group_by(RUNS.c.plan_id)
    )
    return {pid: slot for pid, slot in rows if slot is not None}
