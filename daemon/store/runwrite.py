"""The run tables' writes: the only statements that insert into or change `runs`,
`run_events`, `execute_results` and `swap_events`.

Imported by `jupcron.store.runstore` alone (the run store port; an architecture
test holds it so): every other module reads those tables, none writes them.

`claim` is where "at most one order per (plan, fire time)" is decided: an
INSERT that the database's unique key lets through once; every later caller
(a second fire, a second daemon) gets ``None``. A manual fire's claim (`alone`: a
slot of its own, "now", which the key never stops) also decides "no run of the plan
that has not ended": looked for in its own transaction, under the plan's lock.
`advance` is a compare-and-set on the run's status (and, given `match`, on the
columns that name its order), in one UPDATE … RETURNING.

The runner writes these on every step, so they are `Prepared` statements
(`jupcron.store.prepared`): built and compiled once per dialect, run on the
driver's cursor. Building a statement and its cache key per call, the ORM's
session bookkeeping, and then SQLAlchemy's per-execution machinery were most
of a run's CPU in the profile. Events go in one multi-row INSERT (not the
driver's executemany, which psycopg runs as a pipeline of its own); in a group
commit's batch, one INSERT at its end takes every write's (`deferred_events`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import BindParameter, Column, Connection, Table, bindparam, delete, update

from jupcron.domain import FINAL, RunStatus
from jupcron.store import planlock
from jupcron.store.engine import dialect_insert
from jupcron.store.models import ExecuteResultRow, Plan, Run, RunEvent, SwapEventRow
from jupcron.store.multirow import row_sends
from jupcron.store.port import Event, ExecuteValues, Reservation, UnendedRunError
from jupcron.store.prepared import Prepared
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.store.steps import Send, Steps, executed
from jupcron.store.types import utc

RUNS = cast(Table, Run.__table__)
PLANS = cast(Table, Plan.__table__)
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
# the columns an advance may be conditional on besides status: those naming the
# run's order (each order has its own requestId and unsigned transaction), and its
# driver (`claimed_by`: a recovery that takes the run over writes its own name)
_MATCH = frozenset({"request_id", "unsigned_tx", "claimed_by"})
# the columns of runs and of execute_results that hold what the API said in its own
# words, kept as every backend can hold them (`_fit`)
_SAID = frozenset({"error_code", "error"})
_RESULT_SAID = ("code", "error")
_RESULT_COLUMNS = (
    "operation", "status", "code", "http_status", "slot", "error", "order_account",
    "total_input_amount", "total_output_amount", "input_amount_result",
    "output_amount_result", "answer", "recorded_at",
)  # fmt: skip
# the columns a claim sets (every other one starts NULL)
_CLAIM_COLUMNS = (
    "plan_id", "plan_version", "scheduled_for", "status", "trigger", "error", "attempts",
    "claimed_by", "created_at", "updated_at", "finished_at", "wallet", "owner",
    "input_mint", "in_amount", "output_mint",
)  # fmt: skip
_EVENT_COLUMNS = ("run_id", "step", "detail", "at")
_SWAP_COLUMNS = (
    "result_id", "position", "amm", "input_mint", "input_amount", "output_mint", "output_amount",
)  # fmt: skip
_deferred = threading.local()  # .scope: (connection, its deferred events) in this thread


def _param(column: Column[Any], name: str | None = None) -> BindParameter[Any]:
    """A parameter for `column`, with its type (so its value is converted as the
    column's: a datetime to UTC, a dict to JSON)."""
    return bindparam(name or column.key, type_=column.type)


def _claim_stmt(dialect: str) -> Any:
    insert = dialect_insert(dialect)
    stmt = insert(RUNS).values({k: _param(RUNS.c[k]) for k in _CLAIM_COLUMNS})
    return stmt.on_conflict_do_nothing(index_elements=["plan_id", "scheduled_for"]).returning(
        *RUNS.c
    )


def _result_insert(dialect: str) -> Any:
    names = ("run_id", "signature", *_RESULT_COLUMNS)
    insert = dialect_insert(dialect)
    return insert(RESULTS).values({n: _param(RESULTS.c[n]) for n in names})


def _first_result_stmt(dialect: str) -> Any:
    """The first answer for (run, signature): inserted, its id returned; none if one is there."""
    stmt = _result_insert(dialect)
    return stmt.on_conflict_do_nothing(index_elements=["run_id", "signature"]).returning(
        RESULTS.c.id
    )


def _newer_result_stmt(dialect: str) -> Any:
    """A later answer for (run, signature): it replaces the stored one; the row's id."""
    stmt = _result_insert(dialect)
    return stmt.on_conflict_do_update(
        index_elements=["run_id", "signature"],
        set_={name: stmt.excluded[name] for name in _RESULT_COLUMNS},
    ).returning(RESULTS.c.id)


def _claim_current_stmt(dialect: str) -> Any:
    """The claim of a run to be ordered: inserted only while its plan is still enabled
    at the version the caller read (a scheduler fires its own copy of the plan, which
    `plans apply` may have changed or disabled since)."""
    typed = dialect == "postgresql"  # a bare parameter in a SELECT list is text there
    values = [
        (sa.cast(_param(RUNS.c[k]), RUNS.c[k].type) if typed else _param(RUNS.c[k])).label(k)
        for k in _CLAIM_COLUMNS
    ]
    current = sa.exists().where(
        PLANS.c.id == _param(RUNS.c.plan_id), PLANS.c.version == _param(RUNS.c.plan_version),
        PLANS.c.enabled.is_(True),
    )  # fmt: skip
    rows = sa.select(*values).where(current)
    if typed:  # PostgreSQL: the plan's lock, shared, before the row goes in
        rows = rows.where(planlock.shared(_param(RUNS.c.plan_id)))
    stmt = dialect_insert(dialect)(RUNS).from_select(_CLAIM_COLUMNS, rows)
    return stmt.on_conflict_do_nothing(index_elements=["plan_id", "scheduled_for"]).returning(
        *RUNS.c
    )


_CLAIM = Prepared(_claim_stmt)
_CLAIM_CURRENT = Prepared(_claim_current_stmt)
PLAN_CHANGED = "not fired: the plan changed or was disabled since the daemon read it"
_FIRST_RESULT = Prepared(_first_result_stmt)
_NEWER_RESULT = Prepared(_newer_result_stmt)
_UNSWAP = Prepared(delete(SWAPS).where(SWAPS.c.result_id == _param(SWAPS.c.result_id, "b_id")))
_RESERVE = Prepared(
    update(RUNS)
    .where(RUNS.c.id == _param(RUNS.c.id, "b_id"))
    .values(
        input_mint=_param(RUNS.c.input_mint, "v_input_mint"),
        in_amount=_param(RUNS.c.in_amount, "v_in_amount"),
        output_mint=_param(RUNS.c.output_mint, "v_output_mint"),
        owner=_param(RUNS.c.owner, "v_owner"),
    )
)
_BUMP = Prepared(
    update(RUNS)
    .where(RUNS.c.id == _param(RUNS.c.id, "b_id"))
    .values(attempts=RUNS.c.attempts + _param(RUNS.c.attempts, "b_bump"))
)


_EVENT_ROWS = EVENTS.insert()
_SWAP_ROWS = SWAPS.insert()


def event_sends(dialect: str, events: Sequence[Event]) -> list[Send]:
    """The INSERTs of `events` (run_id, step, detail, at), in order."""
    return list(row_sends(dialect, _EVENT_ROWS, _EVENT_COLUMNS, events))


@cache
def _advance_stmt(
    keys: tuple[str, ...], expect: int, match: tuple[tuple[str, bool], ...] = ()
) -> Prepared:
    """UPDATE runs SET <keys>, attempts = attempts + :bump [WHERE status IN <expect
    statuses>] [AND each `match` column = :m_<column> (IS NULL where its flag says
    so)] RETURNING the columns it set, as stored, in the same statement."""
    values: dict[Any, Any] = {key: _param(RUNS.c[key], f"v_{key}") for key in keys}
    values["attempts"] = RUNS.c.attempts + _param(RUNS.c.attempts, "b_bump")
    stmt = update(RUNS).where(RUNS.c.id == _param(RUNS.c.id, "b_id")).values(values)
    if expect:
        statuses = [_param(RUNS.c.status, f"b_expect{n}") for n in range(expect)]
        stmt = stmt.where(
            RUNS.c.status.in_(statuses) if expect > 1 else RUNS.c.status == statuses[0]
        )
    for name, null in match:
        column = RUNS.c[name]
        stmt = stmt.where(column.is_(None) if null else column == _param(column, f"m_{name}"))
    return Prepared(stmt.returning(*(RUNS.c[key] for key in (*keys, "attempts"))))


def claim_steps(
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
    spends: Reservation | None = None,
    owner: str | None = None,
    alone: bool = False,
) -> Steps[RunRecord | None]:
    """Insert the run row for (plan, slot); the row, or ``None`` if the slot is taken. A
    `pending` run whose stored plan is no longer enabled at ``plan.version`` is inserted
    `skipped` instead. `detail` joins the `claimed` event's (the run's dry-run state).
    `spends`: what the run is to put in, on its row from the claim on, so that every cap
    check counts it (one a reload adds while the run is ordering among them). `owner`:
    the keypair (address) of the plan's wallet, which the caps count the run against.
    `alone`: a pending run only while the plan has none that has not ended, else
    `UnendedRunError` before anything is written (a manual fire: `RunStore.claim`)."""
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
        "owner": owner,
        "input_mint": None if spends is None else spends.input_mint,
        "in_amount": None if spends is None else str(spends.in_amount),
        "output_mint": None if spends is None else spends.output_mint,
    }
    # a run to be ordered only for the plan as the store has it; a slot recorded as
    # skipped (a changed plan's old slots among them) whatever the plan is now
    current = status is RunStatus.PENDING
    if current and alone:
        beside = planlock.unended(conn, plan.id)
        if beside is not None:
            raise UnendedRunError(beside)
    row = _one((yield Send(_CLAIM_CURRENT if current else _CLAIM, values)))
    if row is None and current:  # the slot is taken, or the plan changed: then it is skipped
        status = RunStatus.SKIPPED
        values.update(status=str(status), error=PLAN_CHANGED, finished_at=now)
        row = _one((yield Send(_CLAIM, values)))
    if row is None:
        return None
    claimed = {"status": str(status), "trigger": trigger, **(detail or {})}
    yield from add_events_steps(conn, [(row["id"], "claimed", claimed, now)])
    return RunRecord.from_mapping(row)


def advance_steps(
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
    match: Mapping[str, Any] | None = None,
) -> Steps[dict[str, Any] | None]:
    """Compare-and-set: move a run that is in one of `expect` (and whose `match`
    columns still hold those values, None meaning NULL) to `status` and set `fields`,
    recording an event after the events `before` (attempts, which also count in its
    `attempts`). The columns it set (with `attempts`) as the database stored them,
    or ``None`` if it did not move."""
    fields = dict(fields or {})
    for said in _SAID.intersection(fields):  # the API's words, as the column holds them
        fields[said] = _fit(RUNS.c[said], fields[said])
    unknown = set(fields) - _FIELDS
    if unknown:
        raise TypeError(f"advance() got unknown run fields: {sorted(unknown)}")
    match = dict(match or {})
    if match.keys() - _MATCH:
        raise TypeError(f"advance() cannot match on {sorted(match.keys() - _MATCH)}")
    statuses = [str(s) for s in expect]
    if not statuses:
        return None  # expects none of the statuses: cannot move
    values: dict[str, Any] = {"status": str(status), "updated_at": now, **fields}
    if (status in FINAL or status is RunStatus.IN_DOUBT) and not _ended(statuses):
        values["finished_at"] = now
    params = {f"v_{key}": value for key, value in values.items()}
    params["b_id"] = run_id
    params["b_bump"] = sum(1 for event in before if event[1] == "attempt")
    params.update((f"b_expect{n}", status) for n, status in enumerate(statuses))
    shape = tuple((name, match[name] is None) for name in sorted(match))
    params.update((f"m_{name}", match[name]) for name, null in shape if not null)
    stmt = _advance_stmt(tuple(sorted(values)), len(statuses), shape)
    row = _one((yield Send(stmt, params)))
    if row is None:
        return None
    yield from add_events_steps(conn, [*before, (run_id, step, dict(detail), now)])
    return row


_ENDED = frozenset(str(s) for s in (*FINAL, RunStatus.IN_DOUBT))


def _ended(expect: Sequence[str]) -> bool:
    """Whether the run had ended already in every status the move expects (an operator's
    verdict on an ``in_doubt`` run): it keeps the ``finished_at`` of that end. The caps
    count a run by when its money may have moved (`jupcron.store.audit.spent`): a verdict
    days later that it landed must not count its spend again, from the verdict's time."""
    return all(status in _ENDED for status in expect)


def _fit(column: Column[Any], value: Any) -> Any:
    """`value` as `column` holds it on every backend, for the text the API chooses (its
    ``code``, possibly a string of any length, API.md; its error text): a NUL character
    replaced (U+FFFD), and a string longer than the column's VARCHAR(n) cut to its
    first n characters. SQLite keeps either as it is; PostgreSQL refused them, failing
    the whole write (a run's final state, the answer and the attempts booked with it)
    on every try. A long code stays whole beside it: in the run's error text or events,
    and in the answer as it came."""
    if type(value) is not str:
        return value
    if "\x00" in value:  # PostgreSQL's text holds no NUL
        value = value.replace("\x00", "\ufffd")
    length = getattr(column.type, "length", None)
    return value[:length] if length is not None and len(value) > length else value


def _one(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The one row a statement of one run returned, or ``None``."""
    if len(rows) > 1:
        raise LookupError(f"expected at most one row, got {len(rows)}")
    return rows[0] if rows else None


def add_events_steps(conn: Connection, events: Sequence[Event]) -> Steps[None]:
    """Append events (run_id, step, detail, at), in order, in one statement (up to
    `jupcron.store.multirow.rows_per_insert` of them); inside `deferred_events`, at its end."""
    deferred = getattr(_deferred, "scope", None)
    if deferred is not None and deferred[0] is conn:
        deferred[1].extend(events)
        return
    for send in event_sends(conn.dialect.name, events):  # noqa: UP028 - a list takes no send()
        yield send


@contextmanager
def deferred_events(conn: Connection) -> Iterator[Callable[[], list[Send]]]:
    """The events added on `conn` meanwhile are kept; the function it gives makes
    their INSERTs (in order, in as few statements as
    `jupcron.store.multirow.rows_per_insert` allows), for the block's owner to send
    at its end, in the same transaction: a group commit's writes share one INSERT of
    their events instead of one each. Nothing in the block may read the events it
    adds (a run's writes are never in one batch)."""
    queue: list[Event] = []
    _deferred.scope = (conn, queue)  # this thread's writes on `conn` (the batch's)
    try:
        yield lambda: event_sends(conn.dialect.name, queue)
    finally:
        _deferred.scope = None


def record_events_steps(
    conn: Connection, events: Sequence[Event], *, wait: bool = False
) -> Steps[None]:
    """Append events, counting the attempts among them in their runs' `attempts`
    (`wait`: before the write goes on, for one that reads the run afterwards)."""
    if not events:
        return
    bumps: dict[int, int] = {}
    for run_id, step, _, _ in events:
        if step == "attempt":
            bumps[run_id] = bumps.get(run_id, 0) + 1
    for run_id, by in bumps.items():
        yield Send(_BUMP, {"b_id": run_id, "b_bump": by}, wait=wait)
    yield from add_events_steps(conn, events)


def reserve(conn: Connection, run_id: int, reservation: Reservation, owner: str) -> None:
    """Record the run's input on its (pending) row, so later cap checks count it, and
    the keypair that signs it (`owner`: that of the claim, unless the wallet's keypair
    was replaced before a recovery ordered the run)."""
    _RESERVE.run(
        conn,
        {
            "b_id": run_id,
            "v_input_mint": reservation.input_mint,
            "v_in_amount": str(reservation.in_amount),
            "v_output_mint": reservation.output_mint,
            "v_owner": owner,
        },
    )


def record_execute_steps(conn: Connection, values: ExecuteValues) -> Steps[int]:
    """Store (or replace) the result of `values.run_id` for its signature; its id.
    One row per (run, signature): a re-post of the same signed transaction answers
    again, and the newer answer replaces the older one."""
    row = {name: getattr(values, name) for name in ("run_id", "signature", *_RESULT_COLUMNS)}
    for said in _RESULT_SAID:  # the API's words, as the column holds them
        row[said] = _fit(RESULTS.c[said], row[said])
    first = _one((yield Send(_FIRST_RESULT, row)))  # the usual case: nothing to undo
    if first is not None:
        result_id = int(first["id"])
    else:
        result_id = int((yield Send(_NEWER_RESULT, row))[0]["id"])
        yield Send(_UNSWAP, {"b_id": result_id}, wait=False)  # the older answer's swap events
    yield from row_sends(
        conn.dialect.name, _SWAP_ROWS, _SWAP_COLUMNS,
        [
            (result_id, n, e.amm, e.input_mint, e.input_amount, e.output_mint, e.output_amount)
            for n, e in enumerate(values.swap_events)
        ],
    )  # fmt: skip
    return result_id


# each write at once, its statements executed as it yields them
claim = executed(claim_steps)
advance = executed(advance_steps)
add_events = executed(add_events_steps)
record_events = executed(record_events_steps)
record_execute = executed(record_execute_steps)
