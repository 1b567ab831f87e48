"""The unique (plan, fire time) claim and the run repository, on both backends."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from types import SimpleNamespace

import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import StoreBusyError
from jupcron.runner.book import RunBook
from jupcron.store import runs
from jupcron.store.engine import begin, make_engine, session_factory, transaction
from jupcron.store.models import Plan, Run
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from jupcron.store.types import RunStatus

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SWAP = {
    "inputMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "outputMint": "So11111111111111111111111111111111111111112",
    "amount": 1_000_000,
}
SLOT = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


@pytest.fixture
def factory(db_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(db_url)
    yield session_factory(engine)
    engine.dispose()


def make_plan(factory: sessionmaker[Session], name: str = "weekly") -> PlanRecord:
    with transaction(factory) as session:
        row = Plan(
            name=name, kind="swap", schedule={"every": "1h"}, request=SWAP, settings={},
            content_hash="x", version=1, enabled=True, created_at=NOW, updated_at=NOW,
        )  # fmt: skip
        session.add(row)
        session.flush()
        return PlanRecord.from_row(row)


def test_second_claim_of_a_slot_is_refused(factory: sessionmaker[Session]) -> None:
    plan = make_plan(factory)
    with transaction(factory) as session:
        first = runs.claim(session, plan, SLOT, now=NOW)
    with transaction(factory) as session:
        second = runs.claim(session, plan, SLOT, now=NOW)
    assert first is not None
    assert second is None
    # the same instant written in another zone is the same slot
    berlin = SLOT.astimezone(timezone(timedelta(hours=1)))
    with transaction(factory) as session:
        assert runs.claim(session, plan, berlin, now=NOW) is None
        assert runs.claim(session, plan, SLOT + timedelta(hours=1), now=NOW) is not None
    with factory() as session:
        assert len(session.scalars(select(Run)).all()) == 2


def test_the_database_itself_refuses_a_duplicate_row(factory: sessionmaker[Session]) -> None:
    """Not our code: the UNIQUE (plan_id, scheduled_for) constraint in the schema."""
    plan = make_plan(factory)
    row = {
        "plan_id": plan.id, "plan_version": 1, "scheduled_for": SLOT, "status": "pending",
        "trigger": "schedule", "attempts": 0, "created_at": NOW, "updated_at": NOW,
    }  # fmt: skip
    with transaction(factory) as session:
        session.execute(insert(Run).values(**row))
    with pytest.raises(IntegrityError), transaction(factory) as session:
        session.execute(insert(Run).values(**row))


def test_concurrent_claims_let_exactly_one_through(factory: sessionmaker[Session]) -> None:
    plan = make_plan(factory)
    results: list[int | None] = []
    barrier = threading.Barrier(6)

    def worker() -> None:
        barrier.wait()
        with transaction(factory) as session:
            results.append(runs.claim(session, plan, SLOT, now=NOW))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len([r for r in results if r is not None]) == 1


def test_advance_is_a_compare_and_set_with_events(factory: sessionmaker[Session]) -> None:
    plan = make_plan(factory)
    with transaction(factory) as session:
        run_id = runs.claim(session, plan, SLOT, now=NOW)
    assert run_id is not None
    later = NOW + timedelta(seconds=5)
    with transaction(factory) as session:
        moved = runs.advance(
            session, run_id, RunStatus.REQUESTED, now=later, expect=[RunStatus.PENDING],
            request_id="req-1", in_amount="18446744073709551615",
        )  # fmt: skip
        assert moved
    with transaction(factory) as session:
        assert not runs.advance(
            session, run_id, RunStatus.SIGNED, now=later, expect=[RunStatus.PENDING]
        )
    with factory() as session:
        record = runs.get(session, run_id)
        assert record is not None
        assert record.status is RunStatus.REQUESTED
        assert record.request_id == "req-1"
        assert record.in_amount == "18446744073709551615"  # u64 max survives exactly
        assert record.scheduled_for == SLOT
        assert record.scheduled_for.tzinfo is not None
        steps = [step for _, step, _ in runs.events(session, run_id)]
        assert steps == ["claimed", "requested"]
        assert [r.id for r in runs.in_flight(session)] == [run_id]
        assert runs.last_slot(session, plan.id) == SLOT


def test_advance_returns_what_it_stored_and_counts_the_attempts_before_it(
    factory: sessionmaker[Session],
) -> None:
    plan = make_plan(factory)
    engine = factory.kw["bind"]
    with begin(engine) as conn:
        claimed = runs.claim_record(conn, plan, SLOT, now=NOW)
        assert claimed is not None
        assert claimed == runs.get(conn, claimed.id)
        run_id = claimed.id
    attempt = {"operation": "ultra_order", "http_status": 200}
    later = NOW + timedelta(seconds=5)
    with begin(engine) as conn:
        changed = runs.advance(
            conn, run_id, RunStatus.SIGNED, now=later,
            expect=[RunStatus.REQUESTED, RunStatus.PENDING],  # IN (two statuses)
            step="signed", before=[(run_id, "attempt", attempt, later)] * 2,
            signature="sig", expires_at=later.astimezone(timezone(timedelta(hours=-5))),
        )  # fmt: skip
    with begin(engine) as conn:
        stored = runs.get(conn, run_id)
        assert runs.advance(conn, run_id, RunStatus.FAILED, now=later, expect=[]) is None
        steps = [step for _, step, _ in runs.events(conn, run_id)]
    assert changed is not None
    moved = runs.moved(claimed, changed)
    assert moved == stored  # the claimed row plus what RETURNING gave is what a read gives
    assert moved.attempts == 2
    assert moved.expires_at == later
    assert moved.expires_at is not None
    assert moved.expires_at.utcoffset() == timedelta(0)
    assert steps == ["claimed", "attempt", "attempt", "signed"]


def test_a_locked_sqlite_database_is_a_store_busy_error(sqlite_url: str) -> None:
    db_url = sqlite_url
    engine = make_engine(db_url, busy_ms=200)
    path = db_url.removeprefix("sqlite:///")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with pytest.raises(StoreBusyError, match="database is locked"), begin(engine):
            pass
    finally:
        holder.rollback()
        holder.close()
        engine.dispose()
    with begin(engine) as conn:  # and the engine works again once the lock is gone
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1


def test_naive_datetimes_are_refused(factory: sessionmaker[Session]) -> None:
    plan = make_plan(factory)
    with pytest.raises(ValueError, match="naive"), transaction(factory) as session:
        runs.claim(session, plan, datetime(2026, 1, 1), now=NOW)


def test_events_table_is_append_only_in_practice(factory: sessionmaker[Session]) -> None:
    plan = make_plan(factory)
    with transaction(factory) as session:
        run_id = runs.claim(session, plan, SLOT, now=NOW)
        assert run_id is not None
        runs.add_event(session, run_id, "attempt", {"n": 1}, at=NOW)
    with factory() as session:
        count = session.execute(text("SELECT count(*) FROM run_events")).scalar_one()
    assert count == 2


def test_last_slots_of_every_plan_in_one_query(factory: sessionmaker[Session]) -> None:
    a, b = make_plan(factory, "a"), make_plan(factory, "b")
    make_plan(factory, "never-ran")
    with transaction(factory) as session:
        runs.claim(session, a, SLOT, now=NOW)
        runs.claim(session, a, SLOT + timedelta(hours=2), now=NOW)
        runs.claim(session, b, SLOT, now=NOW)
        runs.claim(session, b, SLOT + timedelta(days=9), now=NOW, trigger="manual")
    with factory() as session:
        lasts = runs.last_slots(session)
        assert lasts == {a.id: SLOT + timedelta(hours=2), b.id: SLOT}
        assert all(v.tzinfo is not None for v in lasts.values())
        assert lasts[a.id] == runs.last_slot(session, a.id)


def test_attempts_wait_for_the_next_commit_when_the_store_is_locked(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url, busy_ms=200)
    factory = session_factory(engine)
    plan = make_plan(factory)
    with begin(engine) as conn:
        run_id = runs.claim(conn, plan, SLOT, now=NOW)
    assert run_id is not None
    book = RunBook(SqlRunStore(engine), lambda: NOW)
    observe = book.observer(run_id)
    failed = SimpleNamespace(operation="ultra_order", number=1, http_status=503, error="503",
                             waited=0.0)  # fmt: skip
    holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusyError):
            observe(failed)  # a failed attempt is committed at once: here it cannot be
    finally:
        holder.rollback()
        holder.close()
    book.flush(run_id)  # it waited, and lands with the next commit
    with begin(engine) as conn:
        steps = [step for _, step, _ in runs.events(conn, run_id)]
        record = runs.get(conn, run_id)
    engine.dispose()
    assert steps == ["claimed", "attempt"]
    assert record is not None
    assert record.attempts == 1
