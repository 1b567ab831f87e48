"""A transaction of run writes (a group commit's batch, or one write alone), each
written as steps (`jupcron.store.steps`).

Every write's events wait to the end and go in together (`runwrite.deferred_events`,
given by the run store: this module writes nothing of its own).

On PostgreSQL through psycopg, the batch's writes are stepped side by side and each
round of their statements goes in one round trip (`pgdirect.pipeline`); the last
round carries the events and the ``COMMIT``. A batch of four or five runs' steps made
seven or eight round trips, each ended by a wait to take the GIL back from the workers;
now it makes two or three. A failure anywhere fails the batch as one statement's
failure did: nothing of it is committed, and the group commit tries each write
alone to find whose it was.

Elsewhere (SQLite) each write runs whole, in order, its statements executed as it
yields them, and the caller's transaction commits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import Connection

from jupcron.store import steps
from jupcron.store.prepared import Direct, pgdirect_module
from jupcron.store.steps import Rows, Send, Steps

Write = Callable[[Connection], Steps[Any]]
Deferred = Callable[[Connection], AbstractContextManager[Callable[[], list[Send]]]]


def execute(conn: Connection, writes: Sequence[Write], *, deferred: Deferred) -> list[Any]:
    """Run `writes` in `conn`'s transaction; their results. `deferred(conn)` keeps
    the events they add for the end (`runwrite.deferred_events`). On PostgreSQL the
    transaction is committed here (the caller's COMMIT then finds nothing to do);
    elsewhere the caller commits it."""
    pipelined = _pipelined(conn)
    with deferred(conn) as events:
        stepped = [write(conn) for write in writes]
        if pipelined:
            results, rest = steps.interleave(stepped, lambda sends: round_trip(conn, sends))
        else:
            results, rest = [steps.run(conn, write) for write in stepped], []
        rest.extend(events())
    if pipelined:
        round_trip(conn, rest, commit=True)
    else:
        for send in rest:
            send.stmt.run(conn, send.params)
    return results


def _pipelined(conn: Connection) -> bool:
    if conn.dialect.name != "postgresql" or conn.dialect.driver != "psycopg":
        return False
    return bool(pgdirect_module().usable(conn.connection.dbapi_connection))


def round_trip(conn: Connection, sends: Sequence[Send], *, commit: bool = False) -> list[Rows]:
    """`sends` in one round trip on PostgreSQL (with the COMMIT if `commit`); their rows."""
    bound = [send.stmt.direct(conn.dialect, send.params) for send in sends]
    direct = [b for b in bound if b is not None]
    if len(direct) < len(bound):  # one with no libpq form: each through its cursor (the
        return [send.stmt.run(conn, send.params) for send in sends]  # caller commits)
    pooled = conn.connection
    try:
        raw = pgdirect_module().pipeline(
            pooled.info, pooled.dbapi_connection, [(b.sql, b.values) for b in direct],
            commit=commit,
        )  # fmt: skip
    except Exception as exc:  # raised as SQLAlchemy raises driver errors
        conn._handle_dbapi_exception(exc, _label(direct), None, None, None)
        raise  # not reached: the handler raises
    return [b.rows(r) for b, r in zip(direct, raw, strict=True)]


def _label(direct: list[Direct]) -> str:
    return "pipeline: " + "; ".join(b.sql.decode() for b in direct[:3])
