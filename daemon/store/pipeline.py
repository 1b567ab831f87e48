"""PostgreSQL's pipeline mode for the group commit's connection: fewer round trips
a transaction, the same statements and the same results.

Out of pipeline mode psycopg waits for the server after every message: a
transaction of two statements is four round trips (BEGIN, each statement,
COMMIT). In pipeline mode it sends what it can and waits only when it needs an
answer: BEGIN goes with the first statement, a statement whose rows nobody reads
(an INSERT of events, a DELETE) goes with the next one that is read, and COMMIT
goes with whatever is still unsent. The server runs the same statements in the
same order in the same transaction; an error in one that was sent without
waiting is raised at the next wait (at the latest by COMMIT), which fails the
transaction as it would have failed at the statement.

Only `jupcron.store.prepared` statements are left in flight: they read their
rows themselves (which waits for them). A statement run through SQLAlchemy's
`Connection.execute` (a SELECT whose result SQLAlchemy reads, an UPDATE whose
row count a caller checks) is waited for at once, by `wait_for_core`, before
SQLAlchemy looks at its cursor: in flight, its cursor would have no result yet.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, ExitStack
from typing import Any

from sqlalchemy import Connection, Engine, event

_KEY = "jupcron_pipeline"  # in a pooled connection's info: its open psycopg Pipeline


def install(engine: Engine) -> None:
    """Make `engine`'s connections ready for `open_on` (PostgreSQL with psycopg only)."""
    event.listen(engine, "after_cursor_execute", wait_for_core)


def available(conn: Connection) -> bool:
    """Whether `conn` can go in pipeline mode: psycopg, on an engine `install`ed."""
    return (
        conn.dialect.name == "postgresql"
        and conn.dialect.driver == "psycopg"
        and event.contains(conn.engine, "after_cursor_execute", wait_for_core)
    )


def open_on(conn: Connection) -> AbstractContextManager[Any]:
    """Put `conn` in pipeline mode until the returned context is left (nothing may be
    in flight then: leave it between transactions)."""
    pooled = conn.connection
    stack = ExitStack()
    pooled.info[_KEY] = stack.enter_context(pooled.dbapi_connection.pipeline())  # type: ignore[union-attr]
    stack.callback(pooled.info.pop, _KEY, None)
    return stack


def wait_for_core(
    conn: Connection,
    _cursor: Any,
    _statement: str,
    _parameters: Any,
    context: Any,
    _executemany: bool,
) -> None:
    """SQLAlchemy's ``after_cursor_execute``: a statement SQLAlchemy runs itself (it
    has an execution context; a `Prepared` one has none) is waited for before its
    result is read, when its connection is in pipeline mode."""
    if context is None:
        return
    pipeline = conn.connection.info.get(_KEY)
    if pipeline is not None:
        pipeline.sync()
