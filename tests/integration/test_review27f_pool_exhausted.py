"""A store whose connection pool has no connection free within its timeout is a store
busy for a moment (`StoreBusyError`, retried), not a foreign error.

Every thread of the daemon that reads or writes a run takes a pooled connection
(SQLAlchemy's default pool: 5 plus 10 overflow, 30 s to wait for one). On SQLite a
reader waits up to 30 s for the write lock *holding* its connection, so with more
workers than the pool has connections and a long write elsewhere (a big `plans
apply`), the threads behind them time out in the pool. That timeout was
`sqlalchemy.exc.TimeoutError`, which no caller expects: the run store's write or read
raised it past the runner's store-outage handling (`RetryableError`), so a drive died
with a driver error instead of leaving its run for recovery, and a group commit's batch
failed every write queued in it with it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine

from jupcron.errors import StoreBusyError
from jupcron.store.engine import make_engine
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runs import stored_plan

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SLOT = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """One connection in the pool, and a short wait for it."""
    engine = make_engine(db_url, pool_size=1, max_overflow=0, pool_timeout=0.2)
    yield engine
    engine.dispose()


@pytest.mark.parametrize("group_commit", [True, False])
def test_no_free_connection_is_a_busy_store(engine: Engine, group_commit: bool) -> None:
    plan = stored_plan(engine, "weekly", now=NOW)
    store = SqlRunStore(engine, group_commit=group_commit)
    held = engine.connect()  # every connection of the pool in use elsewhere
    try:
        with pytest.raises(StoreBusyError):
            store.claim(plan, SLOT, now=NOW, trigger="schedule", claimed_by=None)
        with pytest.raises(StoreBusyError):
            store.in_flight()
    finally:
        held.close()
    run = store.claim(plan, SLOT, now=NOW, trigger="schedule", claimed_by=None)
    assert run is not None  # free again: the same write goes through
    assert [r.id for r, _ in store.in_flight()] == [run.id]
