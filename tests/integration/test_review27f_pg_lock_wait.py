"""A run write held up by another session's lock on PostgreSQL waits without bound.

On SQLite a write waits at most `busy_ms` (30 s) for another writer's lock, then
fails as `StoreBusyError`: the runner leaves the run for recovery, the scheduler
retries the slot, and the store-outage alert fires. On PostgreSQL no lock wait is
bounded (no ``lock_timeout``): a session that holds a run's row (an operator's psql
transaction left open over ``UPDATE runs …``, a DBA's ``VACUUM FULL``) holds the
write forever, and with it the group commit's leader, so every write of the daemon
queued behind it: nothing is claimed, settled or alerted, silently, until that
session ends.

Every session of the daemon and the commands now waits at most `busy_ms` for a lock
(``lock_timeout``), as SQLite does; the migrations still wait as long as it takes
(another upgrade, a daemon not stopped first)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from jupcron.domain import RunStatus
from jupcron.errors import StoreBusyError
from jupcron.store.engine import make_engine
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runs import stored_plan

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SLOT = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
BUSY_MS = 500  # the wait a write is given for another session's lock


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    engine = make_engine(pg_url, busy_ms=BUSY_MS)
    yield engine
    engine.dispose()


def test_a_write_behind_another_sessions_lock_fails_as_busy(engine: Engine, pg_url: str) -> None:
    store = SqlRunStore(engine)  # group commit on, as the daemon runs
    run = store.claim(
        stored_plan(engine, "p", now=NOW), SLOT, now=NOW, trigger="schedule", claimed_by="n"
    )
    assert run is not None
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    outcome: list[BaseException | None] = []

    def advance() -> None:
        try:
            store.advance(
                run, RunStatus.REQUESTED, now=NOW, expect=[RunStatus.PENDING], step="ordered",
                detail={}, fields={"request_id": "r1"},
            )  # fmt: skip
            outcome.append(None)
        except BaseException as exc:  # what the write raised, checked below
            outcome.append(exc)

    with psycopg.connect(dsn) as other:  # a session left open over the run's row
        other.execute("SELECT 1 FROM runs WHERE id = %s FOR UPDATE", (run.id,))
        writer = threading.Thread(target=advance, daemon=True)
        writer.start()
        writer.join(BUSY_MS / 1000 + 3)
        waited = writer.is_alive()
        other.rollback()  # the lock goes: a write still waiting goes through now
    writer.join(10)
    assert not waited, "the write still waited for the lock after busy_ms and 3 s more"
    assert outcome
    assert isinstance(outcome[0], StoreBusyError)
