"""Repository functions for runs and their events. Each takes a session.

`claim` is where "at most one order per (plan, fire time)" is decided: an
INSERT that the database's unique key lets through once; every later caller
(a second fire, a second daemon) gets ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Select, Table, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from daemon.store.models import Run, RunEvent
from daemon.store.records import PlanRecord, RunRecord
from daemon.store.types import FINAL, RunStatus, UTCDateTime, utc

# the runner writes these on every step: Core statements on the tables, not the ORM's
# bulk-persistence path (a third of a run's CPU in the profile)
RUNS = cast(Table, Run.__table__)
EVENTS = cast(Table, RunEvent.__table__)

# the columns `advance` may set besides status
_FIELDS = frozenset(
    {
        "request_id", "unsigned_tx", "signed_tx", "signature", "expires_at", "slot",
        "input_mint", "output_mint", "in_amount", "out_amount", "order_account",
        "error_code", "error", "attempts", "claimed_by",
    }
)  # fmt: skip


def claim(
    session: Session,
    plan: PlanRecord,
    scheduled_for: datetime,
    *,
    now: datetime,
    trigger: str = "schedule",
    status: RunStatus = RunStatus.PENDING,
    error: str | None = None,
    claimed_by: str | None = None,
) -> int | None:
    """Insert the run row for (plan, slot); its id, or ``None`` if the slot is taken."""
    values: dict[str, Any] = {
        "plan_id": plan.id,
        "plan_version": plan.version,
        "scheduled_for": utc(scheduled_for),
        "status": str(status),
        "trigger": trigger,
        "error": error,
        "attempts": 0,
        "claimed_by": claimed_by,
        "created_at": now,
        "updated_at": now,
        "finished_at": now if status in FINAL else None,
    }
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = (
        insert(RUNS)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["plan_id", "scheduled_for"])
        .returning(RUNS.c.id)
    )
    run_id = session.execute(stmt).scalar_one_or_none()
    if run_id is not None:
        add_event(session, run_id, "claimed", {"status": str(status), "trigger": trigger}, at=now)
    return run_id


def advance(
    session: Session,
    run_id: int,
    status: RunStatus,
    *,
    now: datetime,
    expect: Iterable[RunStatus] | None = None,
    step: str | None = None,
    detail: dict[str, Any] | None = None,
    **fields: Any,
) -> bool:
    """Move a run to `status` and set `fields`, recording an event.

    With `expect`, only a run currently in one of those statuses moves (a
    compare-and-set); returns whether it moved.
    """
    unknown = set(fields) - _FIELDS
    if unknown:
        raise TypeError(f"advance() got unknown run fields: {sorted(unknown)}")
    values: dict[str, Any] = {"status": str(status), "updated_at": now, **fields}
    if status in FINAL or status is RunStatus.IN_DOUBT:
        values["finished_at"] = now
    stmt = update(RUNS).where(RUNS.c.id == run_id).values(**values)
    if expect is not None:
        stmt = stmt.where(RUNS.c.status.in_([str(s) for s in expect]))
    moved = session.execute(stmt).rowcount > 0  # type: ignore[attr-defined]
    if moved:
        add_event(session, run_id, step or str(status), detail or {}, at=now)
    return bool(moved)


def add_event(
    session: Session, run_id: int, step: str, detail: dict[str, Any], *, at: datetime
) -> None:
    session.execute(insert(EVENTS).values(run_id=run_id, at=at, step=step, detail=detail))


def get(session: Session, run_id: int) -> RunRecord | None:
    # a Core select: the runner reads its run back after every step, ORM identity
    # bookkeeping buys nothing here
    row = session.execute(select(*Run.__table__.c).where(Run.id == run_id)).one_or_none()
    return RunRecord.from_mapping(row._mapping) if row is not None else None


def in_flight(session: Session) -> list[RunRecord]:
    """Runs not yet final: what recovery looks at after a restart."""
    rows = session.scalars(
        select(Run)
        .where(Run.status.in_([str(s) for s in RunStatus if s.in_flight]))
        .order_by(Run.id)
    )
    return [RunRecord.from_row(r) for r in rows]


def last_slot(session: Session, plan_id: int) -> datetime | None:
    """The latest scheduled (not manual) slot recorded for a plan."""
    return session.scalars(
        select(Run.scheduled_for)
        .where(Run.plan_id == plan_id, Run.trigger != "manual")
        .order_by(Run.scheduled_for.desc())
        .limit(1)
    ).first()


def last_slots(session: Session) -> dict[int, datetime]:
    """Every plan's latest scheduled (not manual) slot, in one query."""
    latest = func.max(Run.scheduled_for, type_=UTCDateTime())
    rows = session.execute(
        select(Run.plan_id, latest).where(Run.trigger != "manual").group_by(Run.plan_id)
    )
    return {plan_id: slot for plan_id, slot in rows if slot is not None}


def last_status(session: Session, plan_id: int) -> str | None:
    return session.scalar(
        select(Run.status).where(Run.plan_id == plan_id).order_by(Run.id.desc()).limit(1)
    )


def events(session: Session, run_id: int) -> list[tuple[datetime, str, dict[str, Any]]]:
    rows = session.scalars(select(RunEvent).where(RunEvent.run_id == run_id).order_by(RunEvent.id))
    return [(r.at, r.step, dict(r.detail)) for r in rows]


def bump_attempts(session: Session, run_id: int) -> None:
    session.execute(update(RUNS).where(RUNS.c.id == run_id).values(attempts=RUNS.c.attempts + 1))


def count_status_stmt(status: RunStatus) -> Select[int]:
    return select(func.count()).select_from(Run).where(Run.status == str(status))
