"""The run tables' writes: the only statements that insert into or change `runs`,
`run_events`, `execute_results` and `swap_events`.

Imported by `jupcron.store.runstore` alone (the run store port; an architecture
test holds it so): every other module reads those tables, none writes them.

`claim` is where "at most one order per (plan, fire time)" is decided: an
INSERT that the database's unique key lets through once; every later caller
(a second fire, a second daemon) gets ``None``. `advance` is a compare-and-set
on the run's status, in one UPDATE … RETURNING.

The runner writes these on every step, so they are Core statements built once
and reused: building a statement and its cache key per call, and the ORM's
session bookkeeping, were most of a run's CPU in the profile.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import cache
from typing import Any, cast

from sqlalchemy import BindParameter, Connection, Insert, Table, Update, bindparam, delete, update
from sqlalchemy.dialects import postgresql, sqlite

from jupcron.domain import FINAL, RunStatus
from jupcron.store.models import ExecuteResultRow, Run, RunEvent, SwapEventRow
from jupcron.store.port import Event, ExecuteValues, Reservation
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.store.types import utc

RUNS = cast(Table, Run.__table__)
EVENTS = cast(Table, RunEvent.__table__)
RESULTS = cast(Table, ExecuteResultRow.__table__)
SWAPS = cast(Table, SwapEventRow.__table__)

# the columns `advance` may set besides status
_FIELDS = frozenset(
    {
        "request_id", "unsigned_tx", "signed_tx", "signature", "expires_at", "slot",
        "input_mint", "output_mint", "in_amount", "out_amount", "order_account",
        "error_code", "error", "claimed_by",
    }
)  # fmt: skip
_RESULT_COLUMNS = (
    "operation", "status", "code", "http_status", "slot", "error", "order_account",
    "total_input_amount", "total_output_amount", "input_amount_result",
    "output_amount_result", "answer", "recorded_at",
)  # fmt: skip

_EVENT = EVENTS.insert()
_RESERVE = (
    update(RUNS)
    .where(RUNS.c.id == bindparam("b_id"))
    .values(
        input_mint=bindparam("v_input_mint"),
        in_amount=bindparam("v_in_amount"),
        output_mint=bindparam("v_output_mint"),
    )
)
_BUMP = (
    update(RUNS)
    .where(RUNS.c.id == bindparam("b_id"))
    .values(attempts=RUNS.c.attempts + bindparam("b_bump"))
)


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


@cache
def _result_stmt(dialect: str) -> Insert:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(RESULTS)
    return stmt.on_conflict_do_update(
        index_elements=["run_id", "signature"],
        set_={name: stmt.excluded[name] for name in _RESULT_COLUMNS},
    ).returning(RESULTS.c.id)


def claim(
    conn: Connection,
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
        "wallet": plan.wallet,
    }
    row = conn.execute(_claim_stmt(conn.dialect.name), values).one_or_none()
    if row is None:
        return None
    claimed = {"status": str(status), "trigger": trigger, **(detail or {})}
    add_events(conn, [(row.id, "claimed", claimed, now)])
    return RunRecord.from_mapping(row._mapping)


def advance(
    conn: Connection,
    run_id: int,
    status: RunStatus,
    *,
    now: datetime,
    expect: Iterable[RunStatus],
    step: str,
    detail: Mapping[str, Any],
    before: Sequence[Event] = (),
    fields: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Compare-and-set: move a run that is in one of `expect` to `status` and set
    `fields`, recording an event after the events `before` (attempts, which also
    count in its `attempts`). The columns it set (with `attempts`) as the database
    stored them, or ``None`` if it did not move."""
    fields = dict(fields or {})
    unknown = set(fields) - _FIELDS
    if unknown:
        raise TypeError(f"advance() got unknown run fields: {sorted(unknown)}")
    statuses = [str(s) for s in expect]
    if not statuses:
        return None  # expects none of the statuses: cannot move
    values: dict[str, Any] = {"status": str(status), "updated_at": now, **fields}
    if status in FINAL or status is RunStatus.IN_DOUBT:
        values["finished_at"] = now
    params = {f"v_{key}": value for key, value in values.items()}
    params["b_id"] = run_id
    params["b_bump"] = sum(1 for event in before if event[1] == "attempt")
    params.update((f"b_expect{n}", status) for n, status in enumerate(statuses))
    stmt = _advance_stmt(tuple(sorted(values)), len(statuses))
    row = conn.execute(stmt, params).one_or_none()
    if row is None:
        return None
    add_events(conn, [*before, (run_id, step, dict(detail), now)])
    return dict(row._mapping)


def add_events(conn: Connection, events: Sequence[Event]) -> None:
    """Append events (run_id, step, detail, at) in one statement."""
    if events:
        rows = [{"run_id": r, "step": s, "detail": d, "at": a} for r, s, d, a in events]
        conn.execute(_EVENT, rows)


def record_events(conn: Connection, events: Sequence[Event]) -> None:
    """Append events, counting the attempts among them in their runs' `attempts`."""
    if not events:
        return
    bumps: dict[int, int] = {}
    for run_id, step, _, _ in events:
        if step == "attempt":
            bumps[run_id] = bumps.get(run_id, 0) + 1
    for run_id, by in bumps.items():
        conn.execute(_BUMP, {"b_id": run_id, "b_bump": by})
    add_events(conn, events)


def reserve(conn: Connection, run_id: int, reservation: Reservation) -> None:
    """Record the run's input on its (pending) row, so later cap checks count it."""
    conn.execute(
        _RESERVE,
        {
            "b_id": run_id,
            "v_input_mint": reservation.input_mint,
            "v_in_amount": str(reservation.in_amount),
            "v_output_mint": reservation.output_mint,
        },
    )


def record_execute(conn: Connection, values: ExecuteValues) -> int:
    """Store (or replace) the result of `values.run_id` for its signature; its id.
    One row per (run, signature): a re-post of the same signed transaction answers
    again, and the newer answer replaces the older one."""
    row = {name: getattr(values, name) for name in ("run_id", "signature", *_RESULT_COLUMNS)}
    result_id = int(conn.execute(_result_stmt(conn.dialect.name), row).scalar_one())
    conn.execute(delete(SWAPS).where(SWAPS.c.result_id == result_id))
    if values.swap_events:
        conn.execute(
            SWAPS.insert(),
            [
                {
                    "result_id": result_id, "position": n, "amm": e.amm,
                    "input_mint": e.input_mint, "input_amount": e.input_amount,
                    "output_mint": e.output_mint, "output_amount": e.output_amount,
                }
                for n, e in enumerate(values.swap_events)
            ],
        )  # fmt: skip
    return result_id
