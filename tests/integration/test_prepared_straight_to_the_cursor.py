"""`jupcron.store.prepared` on SQLite with nobody listening: statements go straight to
the cursor (not through `Connection._cursor_execute`), yet a listener added at any
time sees them from then on, and a driver error is raised as SQLAlchemy raises it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, event
from sqlalchemy.exc import IntegrityError

from jupcron.errors import StoreBusyError
from jupcron.store import runs, runwrite
from jupcron.store.engine import begin, make_engine
from tests.fixtures.runs import stored_plan

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SLOT = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


def _driver(conn: Connection) -> sqlite3.Connection:
    """The driver's own connection (its statements begin no transaction of ours)."""
    driver = conn.connection.driver_connection
    assert isinstance(driver, sqlite3.Connection)
    return driver


@pytest.fixture
def engine(sqlite_url: str) -> Iterator[Engine]:
    engine = make_engine(sqlite_url, pool_size=1, max_overflow=0)  # one driver connection
    yield engine
    engine.dispose()


def test_a_listener_added_later_sees_the_statements_from_then_on(engine: Engine) -> None:
    plan = stored_plan(engine, "p", now=NOW)
    with begin(engine) as conn:  # nobody listening: straight to the cursor
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None
    seen: list[str] = []

    def listener(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", listener)
    with begin(engine) as conn:
        assert runwrite.claim(conn, plan, SLOT + timedelta(hours=1), now=NOW) is not None
    assert [s.split()[:3] for s in seen] == [
        ["INSERT", "INTO", "runs"], ["INSERT", "INTO", "run_events"],
    ]  # fmt: skip
    event.remove(engine, "before_cursor_execute", listener)
    with begin(engine) as conn:
        assert runwrite.claim(conn, plan, SLOT + timedelta(hours=2), now=NOW) is not None
    assert len(seen) == 2
    with begin(engine) as conn:
        assert len(runs.in_flight(conn)) == 3


def test_a_driver_error_on_the_bare_cursor_is_raised_as_sqlalchemy_raises_it(
    engine: Engine,
) -> None:
    plan = stored_plan(engine, "p", now=NOW)
    with pytest.raises(IntegrityError) as raised, begin(engine) as conn:
        runwrite.add_events(conn, [(10_000, "x", {}, NOW)])  # no such run: foreign key
    assert isinstance(raised.value.orig, sqlite3.IntegrityError)
    assert "run_events" in str(raised.value.statement)
    with begin(engine) as conn:  # the connection goes on, on a fresh cursor
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None


def test_a_store_refusing_writes_fails_the_statement_as_a_busy_store(engine: Engine) -> None:
    plan = stored_plan(engine, "p", now=NOW)
    with engine.connect() as conn:  # the pool's one driver connection, made read-only
        _driver(conn).execute("PRAGMA query_only=ON")
    with pytest.raises(StoreBusyError, match="readonly"), begin(engine) as conn:
        runwrite.claim(conn, plan, SLOT, now=NOW)
    with engine.connect() as conn:
        _driver(conn).execute("PRAGMA query_only=OFF")
    with begin(engine) as conn:  # nothing of it was written; the slot is still free
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None
