"""The unique (plan, fire time) claim and the run store's compare-and-set, on both
backends; every write through the run store port (`SqlRunStore`)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import RunStatus
from jupcron.errors import StoreBusyError
from jupcron.runner.book import RunBook, RunTakenOver
from jupcron.store import runs
from jupcron.store.engine import begin, make_engine, session_factory, transaction
from jupcron.store.models import Run
from jupcron.store.port import ExecuteValues, SwapEventValues
from jupcron.store.records import PlanRecord
from jupcron.store.results import results_of
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runs import stored_plan

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


def store_of(factory: sessionmaker[Session]) -> SqlRunStore:
    return SqlRunStore(factory.kw["bind"], group_commit=False)


def claim(store: SqlRunStore, plan: PlanRecord, slot: datetime, **options: Any) -> int | None:
    options = {"now": NOW, "trigger": "schedule", "claimed_by": None, **options}
    record = store.claim(plan, slot, **options)
    return None if record is None else record.id


def make_plan(factory: sessionmaker[Session], name: str = "weekly") -> PlanRecord:
    return stored_plan(factory, name, now=NOW)


def test_second_claim_of_a_slot_is_refused(factory: sessionmaker[Session]) -> None:
    plan, store = make_plan(factory), store_of(factory)
    first = claim(store, plan, SLOT)
    second = claim(store, plan, SLOT)
    assert first is not None
    assert second is None
    # the same instant written in another zone is the same slot
    berlin = SLOT.astimezone(timezone(timedelta(hours=1)))
    assert claim(store, plan, berlin) is None
    assert claim(store, plan, SLOT + timedelta(hours=1)) is not None
    # a skip is a claim too: a taken slot keeps its run
    assert store.skip(plan, [SLOT, SLOT + timedelta(hours=2)], now=NOW, error="missed") == [
        SLOT + timedelta(hours=2)
    ]
    with factory() as session:
        assert len(session.scalars(select(Run)).all()) == 3
        assert runs.last_status(session, plan.id) == "skipped"


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
    plan, store = make_plan(factory), store_of(factory)
    results: list[int | None] = []
    barrier = threading.Barrier(6)

    def worker() -> None:
        barrier.wait()
        results.append(claim(store, plan, SLOT))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len([r for r in results if r is not None]) == 1


def test_advance_is_a_compare_and_set_with_events(factory: sessionmaker[Session]) -> None:
    plan, store = make_plan(factory), store_of(factory)
    run = store.claim(plan, SLOT, now=NOW, trigger="schedule", claimed_by=None)
    assert run is not None
    run_id = run.id
    later = NOW + timedelta(seconds=5)
    requested, moved = store.advance(
        run, RunStatus.REQUESTED, now=later, expect=[RunStatus.PENDING], step="requested",
        detail={}, fields={"request_id": "req-1", "in_amount": "18446744073709551615"},
    )  # fmt: skip
    assert moved
    again, moved = store.advance(
        run, RunStatus.SIGNED, now=later, expect=[RunStatus.PENDING], step="signed", detail={}
    )
    assert not moved
    assert again == requested  # the run as it is: the loser sees the winner's row
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
    plan, store = make_plan(factory), store_of(factory)
    engine = factory.kw["bind"]
    claimed = store.claim(plan, SLOT, now=NOW, trigger="schedule", claimed_by=None)
    assert claimed is not None
    assert claimed == store.load(claimed.id)
    run_id = claimed.id
    attempt = {"operation": "ultra_order", "http_status": 200}
    later = NOW + timedelta(seconds=5)
    moved, done = store.advance(
        claimed, RunStatus.SIGNED, now=later,
        expect=[RunStatus.REQUESTED, RunStatus.PENDING],  # IN (two statuses)
        step="signed", detail={}, before=[(run_id, "attempt", attempt, later)] * 2,
        fields={"signature": "sig",
                "expires_at": later.astimezone(timezone(timedelta(hours=-5)))},
    )  # fmt: skip
    assert done
    stored = store.load(run_id)
    _, none = store.advance(moved, RunStatus.FAILED, now=later, expect=[], step="failed", detail={})
    assert not none  # expects no status: cannot move
    with begin(engine) as conn:
        steps = [step for _, step, _ in runs.events(conn, run_id)]
    assert moved == stored  # the claimed row plus what RETURNING gave is what a read gives
    assert type(moved.status) is RunStatus
    assert moved.status is RunStatus.SIGNED
    assert moved.attempts == 2
    assert moved.expires_at == later
    assert moved.expires_at is not None
    assert moved.expires_at.utcoffset() == timedelta(0)
    assert steps == ["claimed", "attempt", "attempt", "signed"]


def _answer(run_id: int, status: str, amms: list[str]) -> ExecuteValues:
    events = tuple(
        SwapEventValues(input_mint=SWAP["inputMint"], input_amount=str(n + 1),
                        output_mint=SWAP["outputMint"], output_amount=str(10 * (n + 1)), amm=amm)
        for n, amm in enumerate(amms)
    )  # fmt: skip
    return ExecuteValues(
        run_id=run_id, signature="sig-1", operation="execute_swap", recorded_at=NOW,
        status=status, answer={"status": status}, swap_events=events,
    )  # fmt: skip


def test_a_newer_answer_for_the_same_signature_replaces_the_older_one(
    factory: sessionmaker[Session],
) -> None:
    """A re-post of the same signed transaction answers again: one result row per
    (run, signature), the newest answer in it, and only that answer's swap events;
    another signature's result is left alone."""
    plan, store = make_plan(factory), store_of(factory)
    run = store.claim(plan, SLOT, now=NOW, trigger="schedule", claimed_by=None)
    assert run is not None
    store.event([], results=[_answer(run.id, "Pending", ["a", "b", "c"])])
    other = replace(_answer(run.id, "Failed", ["z"]), signature="sig-2")
    store.event([], results=[other])
    store.event([], results=[_answer(run.id, "Success", ["d", "e"])])
    with begin(factory.kw["bind"]) as conn:
        stored = results_of(conn, run.id)
    assert [(r["signature"], r["status"], r["answer"]) for r in stored] == [
        ("sig-1", "Success", {"status": "Success"}),
        ("sig-2", "Failed", {"status": "Failed"}),
    ]
    assert [(e["position"], e["amm"]) for e in stored[0]["swap_events"]] == [(0, "d"), (1, "e")]
    assert [e["amm"] for e in stored[1]["swap_events"]] == ["z"]


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
    plan, store = make_plan(factory), store_of(factory)
    with pytest.raises(ValueError, match="naive"):
        claim(store, plan, datetime(2026, 1, 1))
    with factory() as session:
        assert session.scalars(select(Run)).all() == []  # and nothing was written


def test_events_table_is_append_only_in_practice(factory: sessionmaker[Session]) -> None:
    plan, store = make_plan(factory), store_of(factory)
    run_id = claim(store, plan, SLOT)
    assert run_id is not None
    store.event([(run_id, "attempt", {"n": 1}, NOW)])
    with factory() as session:
        count = session.execute(text("SELECT count(*) FROM run_events")).scalar_one()
    assert count == 2


def test_last_slots_of_every_plan_in_one_query(factory: sessionmaker[Session]) -> None:
    a, b = make_plan(factory, "a"), make_plan(factory, "b")
    make_plan(factory, "never-ran")
    store = store_of(factory)
    claim(store, a, SLOT)
    claim(store, a, SLOT + timedelta(hours=2))
    claim(store, b, SLOT)
    claim(store, b, SLOT + timedelta(days=9), trigger="manual")
    with factory() as session:
        lasts = runs.last_slots(session)
        assert lasts == {a.id: SLOT + timedelta(hours=2), b.id: SLOT}
        assert all(v.tzinfo is not None for v in lasts.values())
        assert lasts[a.id] == runs.last_slot(session, a.id)


def test_attempts_wait_for_the_next_commit_when_the_store_is_locked(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url, busy_ms=200)
    factory = session_factory(engine)
    plan = make_plan(factory)
    run_id = claim(store_of(factory), plan, SLOT)
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


def test_the_book_serves_the_order_it_committed_as_the_store_would(
    factory: sessionmaker[Session],
) -> None:
    """`ordered` without a read while this book drives the run: what a read of the
    store gives (the latest ``ordered`` event, as JSON); after the drive, or once
    another driver moved the run, from the store."""
    plan, store = make_plan(factory), store_of(factory)
    run_id = claim(store, plan, SLOT)
    assert run_id is not None
    book, other = RunBook(store, lambda: NOW), RunBook(store, lambda: NOW)
    run = store.load(run_id)
    facts = {"api": "swap/v2", "last_valid_block_height": 7, "pair": ("a", "b")}
    run = book.advance(run, RunStatus.REQUESTED, step="ordered", detail=facts)
    served = book.ordered(run_id)
    assert served == other.ordered(run_id) == {**facts, "pair": ["a", "b"]}
    served["api"] = "changed"  # a caller's copy
    assert book.ordered(run_id)["api"] == "swap/v2"
    # another driver moves it back to pending: this book's next move conflicts (the
    # drive stops there), and from then on it reads the store (which the other writes)
    moved = other.advance(run, RunStatus.PENDING, step="reorder")
    with pytest.raises(RunTakenOver) as taken:
        book.advance(run, RunStatus.SIGNED, step="signed")
    assert taken.value.record.status is RunStatus.PENDING
    other.advance(moved, RunStatus.REQUESTED, step="ordered", detail={"api": "ultra/v1"})
    assert book.ordered(run_id) == {"api": "ultra/v1"}
    book.forget(run_id)
    assert book.ordered(run_id) == {"api": "ultra/v1"}
