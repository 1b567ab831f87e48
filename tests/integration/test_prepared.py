"""`jupcron.store.prepared`: the run path's statements on the driver's cursor store
exactly what SQLAlchemy's own execution stores, on both backends, and fail as it
fails."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, bindparam, event, insert, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from jupcron.domain import RunStatus
from jupcron.store import multirow, runbatch, runs, runwrite
from jupcron.store.engine import begin, make_engine
from jupcron.store.group import GroupCommit
from jupcron.store.models import Run, RunEvent
from jupcron.store.prepared import Prepared
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from jupcron.store.steps import Steps
from tests.fixtures.runs import stored_plan
from tests.support.wait import wait_until

SWAP = {
    "inputMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "outputMint": "So11111111111111111111111111111111111111112",
    "amount": 1_000_000,
}
NOW = datetime(2026, 11, 21, 12, 0, 0, 250_000, tzinfo=UTC)
# the same instant as a non-UTC offset: stored as one text / one timestamptz
SLOT = datetime(2026, 11, 23, 10, 0, tzinfo=timezone(timedelta(hours=2)))


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def make_plan(engine: Engine) -> PlanRecord:
    return stored_plan(engine, "p", now=NOW)


def test_a_claimed_slot_is_the_slot_sqlalchemy_stores(engine: Engine) -> None:
    """The unique (plan, fire time) key sees one value per instant whichever way a row
    is written: a Core insert of the same slot after a prepared claim is refused."""
    plan = make_plan(engine)
    with begin(engine) as conn:
        claimed = runwrite.claim(conn, plan, SLOT, now=NOW)
    assert claimed is not None
    assert (claimed.scheduled_for, claimed.scheduled_for.tzinfo) == (SLOT, UTC)
    assert (claimed.created_at, claimed.status) == (NOW, RunStatus.PENDING)
    core = {
        "plan_id": plan.id, "plan_version": 1, "scheduled_for": SLOT.astimezone(UTC),
        "status": "pending", "trigger": "schedule", "attempts": 0, "created_at": NOW,
        "updated_at": NOW,
    }  # fmt: skip
    with pytest.raises(IntegrityError), begin(engine) as conn:
        conn.execute(insert(Run).values(**core))
    with begin(engine) as conn:
        stored = runs.get(conn, claimed.id)
        raw = conn.execute(text("SELECT scheduled_for, created_at FROM runs")).one()
    assert stored == claimed  # read back by Core: the same record
    if engine.dialect.name == "sqlite":  # SQLAlchemy's own text for a DATETIME
        assert tuple(raw) == ("2026-11-23 08:00:00.000000", "2026-11-21 12:00:00.250000")


def test_events_keep_their_order_and_their_json_across_several_statements(
    engine: Engine,
) -> None:
    plan = make_plan(engine)
    with begin(engine) as conn:
        run = runwrite.claim(conn, plan, SLOT, now=NOW)
        assert run is not None
        events = [(run.id, f"step{n}", {"n": n, "text": "é\u202e", "none": None}, NOW)
                  for n in range(multirow.ROWS * 2 + 3)]  # fmt: skip
        assert multirow.rows_per_insert(engine.dialect.name, 4) * 2 < len(events)
        runwrite.add_events(conn, events)
    with begin(engine) as conn:
        found = runs.events(conn, run.id)
    assert [step for _, step, _ in found] == ["claimed", *(e[1] for e in events)]
    assert [detail for _, _, detail in found[1:]] == [e[2] for e in events]
    assert all(at == NOW for at, _, _ in found)


def test_advance_returns_what_the_database_stored(engine: Engine) -> None:
    plan = make_plan(engine)
    store = SqlRunStore(engine, group_commit=False)
    run = store.claim(plan, SLOT, now=NOW, trigger="manual", claimed_by=None)
    assert run is not None
    later = NOW + timedelta(seconds=3)
    moved, ok = store.advance(
        run, RunStatus.FAILED, now=later, expect=[RunStatus.PENDING], step="failed",
        detail={"why": "x"}, fields={"slot": 7, "in_amount": "12", "error": None},
    )  # fmt: skip
    assert ok
    assert store.load(run.id) == moved
    assert (moved.finished_at, moved.slot, moved.in_amount) == (later, 7, "12")


def test_a_driver_error_is_raised_as_sqlalchemy_raises_it(engine: Engine) -> None:
    with pytest.raises(IntegrityError), begin(engine) as conn:  # no such run: foreign key
        runwrite.add_events(conn, [(10_000, "x", {}, NOW)])
    plan = make_plan(engine)
    with begin(engine) as conn:  # the connection is usable after it
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None


def test_no_insert_has_more_parameters_than_psycopg_keeps_parsed() -> None:
    from psycopg import _queries  # the driver's own limit: an upgrade that lowers it shows here

    assert multirow.PSYCOPG_PARAMS <= _queries.MAX_CACHED_STATEMENT_PARAMS
    for columns in (1, 4, 7, 12, 51):
        per = multirow.rows_per_insert("postgresql", columns)
        assert per >= 1
        assert per * columns <= max(multirow.PSYCOPG_PARAMS, columns)
    assert multirow.rows_per_insert("sqlite", 4) == multirow.ROWS


def test_a_connection_keeps_one_cursor_and_takes_a_new_one_after_an_error(db_url: str) -> None:
    """The cursor path: SQLite's, and PostgreSQL's on a connection psycopg begins with
    settings of its own (else the statements go through libpq: test_pgdirect)."""
    options: dict[str, Any] = {"pool_size": 1, "max_overflow": 0}  # one pooled connection
    if db_url.startswith("postgresql"):
        options["isolation_level"] = "READ COMMITTED"
    engine = make_engine(db_url, **options)
    cursors: list[Any] = []
    event.listen(engine, "before_cursor_execute", lambda _c, cursor, *_a: cursors.append(cursor))
    try:
        plan = make_plan(engine)
        slots = [SLOT + timedelta(hours=n) for n in range(4)]
        for slot in slots[:2]:  # two transactions on the same connection
            with begin(engine) as conn:
                assert runwrite.claim(conn, plan, slot, now=NOW) is not None
        first = cursors[-1]
        assert sum(c is first for c in cursors) == 4  # two claims, their two events
        with pytest.raises(IntegrityError), begin(engine) as conn:
            runwrite.add_events(conn, [(10_000, "x", {}, NOW)])  # no such run
        with begin(engine) as conn:  # a fresh cursor, and the statements work
            assert runwrite.claim(conn, plan, slots[2], now=NOW) is not None
        second = cursors[-1]
        assert second is not first
        with engine.connect() as conn:
            conn.invalidate()  # a new driver connection: its own cursor
        with begin(engine) as conn:
            assert runwrite.claim(conn, plan, slots[3], now=NOW) is not None
        assert cursors[-1] is not second
        with begin(engine) as conn:
            assert sorted(r.scheduled_for for r in runs.in_flight(conn)) == slots
    finally:
        engine.dispose()


def test_an_untyped_parameter_is_refused_before_anything_runs(engine: Engine) -> None:
    """A value without its column's type would reach the driver unconverted."""
    events = RunEvent.__table__  # a second row's bare parameters have no type
    stmt = Prepared(events.insert().values([{"step": bindparam("a")}, {"step": bindparam("b")}]))
    with begin(engine) as conn:
        assert conn.execute(select(1)).scalar() == 1
        with pytest.raises(TypeError, match="untyped"):
            stmt.run(conn, {"a": "x", "b": "y"})


def test_a_batchs_events_go_in_at_its_end_and_a_bad_one_fails_alone(engine: Engine) -> None:
    """The run store's group commit defers each batch's events to the end of its
    transaction: every write's events are committed when its call returns, in order
    per run; a write whose events cannot go in (no such run) fails alone."""
    plan = make_plan(engine)
    group = GroupCommit(
        engine, execute=partial(runbatch.execute, deferred=runwrite.deferred_events)
    )
    with begin(engine) as conn:
        ids = [runwrite.claim(conn, plan, SLOT + timedelta(hours=n), now=NOW) for n in range(4)]
    run_ids = [run.id for run in ids if run is not None]
    gate = threading.Event()
    failed: list[BaseException] = []
    seen: dict[int, list[str]] = {}

    def blocker(conn: Connection) -> Steps[None]:
        gate.wait(10)
        yield from runwrite.add_events_steps(conn, [(run_ids[0], "first", {}, NOW)])

    def steps(run_id: int) -> Callable[[Connection], Steps[None]]:
        def write(conn: Connection) -> Steps[None]:
            yield from runwrite.add_events_steps(
                conn, [(run_id, "one", {}, NOW), (run_id, "two", {}, NOW)]
            )
            yield from runwrite.add_events_steps(conn, [(run_id, "three", {}, NOW)])

        return write

    def writer(fn: Callable[[Connection], Steps[None]], run_id: int) -> None:
        try:
            group.run(fn)
        except IntegrityError as exc:
            failed.append(exc)
            return
        with begin(engine) as conn:  # committed on return
            seen[run_id] = [step for _, step, _ in runs.events(conn, run_id)]

    lead = threading.Thread(target=writer, args=(blocker, run_ids[0]))
    lead.start()
    assert wait_until(lambda: group._busy and not group._queue, timeout=5)
    others = [threading.Thread(target=writer, args=(steps(r), r)) for r in (*run_ids[1:], 10**6)]
    for n, thread in enumerate(others, start=1):
        thread.start()
        assert wait_until(lambda n=n: len(group._queue) == n, timeout=5)
    gate.set()
    for thread in [lead, *others]:
        thread.join(10)
    assert len(failed) == 1  # the events of a run that is not there
    assert seen == {
        run_ids[0]: ["claimed", "first"],
        **{r: ["claimed", "one", "two", "three"] for r in run_ids[1:]},
    }
    with begin(engine) as conn:  # outside a group's batch, events go in at once
        runwrite.add_events(conn, [(run_ids[0], "alone", {}, NOW)])
        assert runs.events(conn, run_ids[0])[-1][1] == "alone"


def test_a_value_meant_for_no_parameter_is_refused_not_dropped(engine: Engine) -> None:
    """A column added to a row's values but not to the statement would be lost
    without a word (the claim once dropped the run's wallet that way)."""
    events = RunEvent.__table__
    stmt = Prepared(events.insert().values(step=bindparam("step", type_=events.c.step.type)))
    with begin(engine) as conn:
        with pytest.raises(TypeError, match="no parameters named \\['wallet'\\]"):
            stmt.run(conn, {"step": "x", "wallet": "savings"})
        assert conn.execute(select(RunEvent.id)).first() is None


def test_a_claim_stores_the_plans_wallet(engine: Engine) -> None:
    plan = make_plan(engine)
    assert plan.wallet == "default"
    moved = dataclasses.replace(plan, wallet="savings")
    slot = datetime(2026, 12, 1, 9, tzinfo=UTC)
    with begin(engine) as conn:
        row = runwrite.claim(conn, moved, slot, now=slot)
    assert row is not None
    assert row.wallet == "savings"
    with Session(engine) as session:
        assert session.scalar(select(Run.wallet).where(Run.id == row.id)) == "savings"
