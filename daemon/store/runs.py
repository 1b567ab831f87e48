"""Repository functions for runs and their events. Each takes a session.

`claim` is where "at most one order per (plan, fire time)" is decided: an
INSERT that the database's unique key lets through once; every later caller
(a second fire, a second daemon) gets ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import cache
from typing import Any, cast

from sqlalchemy import (
    BindParameter,
    Connection,
    Insert,
    Select,
    Table,
    Update,
    bindparam,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from jupcron.store.models import Run, RunEvent
from jupcron.store.port import Event, Reservation
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.store.types import FINAL, RunStatus, UTCDateTime, utc

# The runner writes these on every step, so they are Core statements built once
# and reused: building a statement and its cache key per call, and the ORM's
# session bookkeeping, were most of a run's CPU in the profile.
RUNS = cast(Table, Run.__table__)
EVENTS = cast(Table, RunEvent.__table__)
Conn = Connection | Session

# the columns `advance` may set besides status
_FIELDS = frozenset(
    {
        "request_id", "unsigned_tx", "signed_tx", "signature", "expires_at", "slot",
        "input_mint", "output_mint", "in_amount", "out_amount", "order_account",
        "error_code", "error", "claimed_by",
    }
)  # fmt: skip

_EVENT = EVENTS.insert()
_GET = select(*RUNS.c).where(RUNS.c.id == bindparam("b_id"))


def _dialect(conn: Conn) -> str:
    if isinstance(conn, Session):
        return conn.get_bind().dialect.name
    return conn.dialect.name


@cache
def _claim_stmt(dialect: str) -> Insert:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return (
        insert(RUNS)
        .on_conflict_do_nothing(index_elements=["plan_id", "scheduled_for"])
        .returning(*RUNS.c)
    )


@cache
def _advance_stmt(keys: tuple[str, ...], expect: int) -> Update:
    """UPDATE runs SET <keys>, attempts = attempts + :bump [WHERE status IN <expect
    statuses>] RETURNING the columns it set, as stored, in the same statement."""
    values: dict[Any, Any] = {key: bindparam(f"v_{key}") for key in keys}
    values["attempts"] = RUNS.c.attempts + bindparam("b_bump")
    stmt = update(RUNS).where(RUNS.c.id == bindparam("b_id")).values(values)
    if expect:
        statuses: list[BindParameter[str]] = [bindparam(f"b_expect{n}") for n in range(expect)]
        stmt = stmt.where(
            RUNS.c.status.in_(statuses) if expect > 1 else RUNS.c.status == statuses[0]
        )
    return stmt.returning(*(RUNS.c[key] for key in (*keys, "attempts")))


def claim(session: Conn, plan: PlanRecord, scheduled_for: datetime, **options: Any) -> int | None:
    """Insert the run row for (plan, slot); its id, or ``None`` if the slot is taken.
    `options` are `claim_record`'s."""
    record = claim_record(session, plan, scheduled_for, **options)
    return None if record is None else record.id


def claim_record(
    session: Conn,
    plan: PlanRecord,
    scheduled_for: datetime,
    *,
    now: datetime,
    trigger: str = "schedule",
    status: RunStatus = RunStatus.PENDING,
    error: str | None = None,
    claimed_by: str | None = None,
    detail: Mapping[str, Any] | None = None,
) -> RunRecord | None:
    """Insert the run row for (plan, slot); the row, or ``None`` if the slot is taken.
    `detail` joins the `claimed` event's (the run's dry-run state, say)."""
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
    row = session.execute(_claim_stmt(_dialect(session)), values).one_or_none()
    if row is None:
        return None
    claimed = {"status": str(status), "trigger": trigger, **(detail or {})}
    add_event(session, row.id, "claimed", claimed, at=now)
    return RunRecord.from_mapping(row._mapping)


def advance(
    session: Conn,
    run_id: int,
    status: RunStatus,
    *,
    now: datetime,
    expect: Iterable[RunStatus] | None = None,
    step: str | None = None,
    detail: dict[str, Any] | None = None,
    before: Sequence[Event] = (),
    **fields: Any,
) -> dict[str, Any] | None:
    """Move a run to `status` and set `fields`, recording an event after the
    events `before` (attempts, which also count in its `attempts`).

    With `expect`, only a run currently in one of those statuses moves (a
    compare-and-set). Returns the columns it set (with `attempts`) as the
    database stored them, or ``None`` if it did not move.
    """
    unknown = set(fields) - _FIELDS
    if unknown:
        raise TypeError(f"advance() got unknown run fields: {sorted(unknown)}")
    values: dict[str, Any] = {"status": str(status), "updated_at": now, **fields}
    if status in FINAL or status is RunStatus.IN_DOUBT:
        values["finished_at"] = now
    params = {f"v_{key}": value for key, value in values.items()}
    params["b_id"] = run_id
    params["b_bump"] = sum(1 for event in before if event[1] == "attempt")
    statuses = [] if expect is None else [str(s) for s in expect]
    if expect is not None and not statuses:
        return None  # expects none of the statuses: cannot move
    params.update((f"b_expect{n}", status) for n, status in enumerate(statuses))
    stmt = _advance_stmt(tuple(sorted(values)), len(statuses))
    row = session.execute(stmt, params).one_or_none()
    if row is None:
        return None
    add_events(session, [*before, (run_id, step or str(status), detail or {}, now)])
    return dict(row._mapping)


def moved(run: RunRecord, changed: dict[str, Any]) -> RunRecord:
    """`run` with the columns `advance` set on it."""
    if "status" in changed:
        changed = {**changed, "status": RunStatus(changed["status"])}
    return replace(run, **changed)


def add_event(
    session: Conn, run_id: int, step: str, detail: dict[str, Any], *, at: datetime
) -> None:
    add_events(session, [(run_id, step, detail, at)])


def add_events(session: Conn, events: Sequence[Event]) -> None:
    """Append events (run_id, step, detail, at) in one statement."""
    if events:
        rows = [{"run_id": r, "step": s, "detail": d, "at": a} for r, s, d, a in events]
        session.execute(_EVENT, rows)


def get(session: Conn, run_id: int) -> RunRecord | None:
    row = session.execute(_GET, {"b_id": run_id}).one_or_none()
    return RunRecord.from_mapping(row._mapping) if row is not None else None


_IN_FLIGHT = (
    select(*RUNS.c)
    .where(RUNS.c.status.in_([str(s) for s in RunStatus if s.in_flight]))
    .order_by(RUNS.c.id)
)


def in_flight(session: Conn) -> list[RunRecord]:
    """Runs not yet final: what recovery looks at after a restart."""
    return [RunRecord.from_mapping(row._mapping) for row in session.execute(_IN_FLIGHT)]


_RESERVE = (
    update(RUNS)
    .where(RUNS.c.id == bindparam("b_id"))
    .values(
        input_mint=bindparam("v_input_mint"),
        in_amount=bindparam("v_in_amount"),
        output_mint=bindparam("v_output_mint"),
    )
)


def reserve(session: Conn, run_id: int, reservation: Reservation) -> None:
    """Record the run's input on its (pending) row, so later cap checks count it."""
    session.execute(
        _RESERVE,
        {
            "b_id": run_id,
            "v_input_mint": reservation.input_mint,
            "v_in_amount": str(reservation.in_amount),
            "v_output_mint": reservation.output_mint,
        },
    )


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


def events(session: Conn, run_id: int) -> list[tuple[datetime, str, dict[str, Any]]]:
    rows = session.execute(
        select(EVENTS.c.at, EVENTS.c.step, EVENTS.c.detail)
        .where(EVENTS.c.run_id == run_id)
        .order_by(EVENTS.c.id)
    )
    return [(at, step, dict(detail)) for at, step, detail in rows]


_BUMP = (
    update(RUNS)
    .where(RUNS.c.id == bindparam("b_id"))
    .values(attempts=RUNS.c.attempts + bindparam("b_bump"))
)


def bump_attempts(session: Conn, run_id: int, by: int = 1) -> None:
    session.execute(_BUMP, {"b_id": run_id, "b_bump": by})


def count_status_stmt(status: RunStatus) -> Select[int]:
    return select(func.count()).select_from(Run).where(Run.status == str(status))
