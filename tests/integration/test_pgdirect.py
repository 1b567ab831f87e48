"""`jupcron.store.pgdirect`: on PostgreSQL the run path's statements go through
libpq as named statements. They store and return what the psycopg cursor does,
inside SQLAlchemy's transaction (a rollback undoes them), and fail as a cursor's
statement fails: a server error by its class, a statement the session forgot
prepared again, a lost connection invalidated and replaced."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import psycopg
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DataError, IntegrityError, ProgrammingError

from jupcron.domain import RunStatus
from jupcron.errors import StoreBusyError
from jupcron.store import runs, runwrite
from jupcron.store.engine import begin, make_engine
from jupcron.store.port import ExecuteValues, SwapEventValues
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runs import stored_plan

SWAP = {"inputMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "outputMint": "So11111111111111111111111111111111111111112", "amount": 1_000_000}  # fmt: skip
NOW = datetime(2026, 11, 21, 12, 0, 0, 250_000, tzinfo=UTC)
SLOT = datetime(2026, 11, 23, 10, 0, tzinfo=timezone(timedelta(hours=2)))


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    engine = make_engine(pg_url, pool_size=1, max_overflow=0)  # one session, seen again
    yield engine
    engine.dispose()


def make_plan(engine: Engine, name: str = "p") -> PlanRecord:
    return stored_plan(engine, name, now=NOW)


def ours(engine: Engine) -> list[str]:
    """The statements this session has prepared for the run path."""
    with begin(engine) as conn:
        rows = conn.execute(text("SELECT name FROM pg_prepared_statements ORDER BY name"))
        return [name for (name,) in rows if name.startswith("jupcron_")]


def one_run(engine: Engine, slot: datetime) -> dict[str, object]:
    """A run's writes, as the run store makes them; what each returned."""
    plan = make_plan(engine, f"p{slot:%H%M%S}")
    with begin(engine) as conn:
        claimed = runwrite.claim(conn, plan, slot, now=NOW, detail={"dry": False})
    assert claimed is not None
    later = NOW + timedelta(seconds=2)
    with begin(engine) as conn:
        moved = runwrite.advance(
            conn, claimed.id, RunStatus.SIGNED, now=later, expect=[RunStatus.PENDING],
            step="signed", detail={"n": 1, "text": "é\u202e", "none": None},
            before=[(claimed.id, "attempt", {"http_status": 200}, later)],
            fields={"signature": "sig", "slot": 2**40, "in_amount": "18446744073709551615",
                    "expires_at": later.astimezone(timezone(timedelta(hours=-5)))},
        )  # fmt: skip
        events = (SwapEventValues("a", "1", "b", "2", "amm1"),)
        result = ExecuteValues(
            run_id=claimed.id, signature="sig", operation="execute_swap", recorded_at=later,
            status="Success", slot=7, answer={"status": "Success", "n": [1, 2]},
            swap_events=events,
        )  # fmt: skip
        result_id = runwrite.record_execute(conn, result)
    with begin(engine) as conn:
        stored = runs.get(conn, claimed.id)
        steps = runs.events(conn, claimed.id)
    assert stored is not None
    return {"claimed": claimed, "moved": moved, "result": result_id > 0, "stored": stored,
            "steps": [(at, step, detail) for at, step, detail in steps]}  # fmt: skip


def test_the_direct_path_stores_and_returns_what_the_cursor_does(
    engine: Engine, pg_url: str
) -> None:
    """The same writes through libpq and, on an engine psycopg would begin with
    other settings (so they take the cursor), give the same records and rows."""
    direct = one_run(engine, SLOT)
    assert len(ours(engine)) >= 4  # claim, events, advance, result, swap events
    cursor_engine = make_engine(pg_url, isolation_level="READ COMMITTED")
    try:
        through_cursor = one_run(cursor_engine, SLOT + timedelta(hours=1))
        with begin(cursor_engine) as conn:
            assert conn.connection.dbapi_connection.isolation_level is not None
    finally:
        cursor_engine.dispose()

    def same_shape(found: dict[str, object]) -> dict[str, object]:
        claimed, stored = found["claimed"], found["stored"]
        assert isinstance(claimed, RunRecord)
        assert isinstance(stored, RunRecord)
        keep = lambda r: {k: v for k, v in vars(r).items()  # noqa: E731
                          if k not in ("id", "plan_id", "scheduled_for")}  # fmt: skip
        return {**found, "claimed": keep(claimed), "stored": keep(stored)}

    assert same_shape(direct) == same_shape(through_cursor)
    stored = direct["stored"]
    assert isinstance(stored, RunRecord)
    assert (stored.slot, stored.in_amount) == (2**40, "18446744073709551615")
    assert stored.expires_at == NOW + timedelta(seconds=2)
    assert stored.scheduled_for == SLOT
    assert stored.scheduled_for.tzinfo == UTC


def test_a_rollback_undoes_a_statement_that_began_the_transaction(engine: Engine) -> None:
    plan = make_plan(engine)

    def claim_then_fail() -> None:
        with begin(engine) as conn:
            assert conn.connection.dbapi_connection.pgconn.transaction_status == 0  # IDLE
            assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None  # our BEGIN, then it
            raise RuntimeError("the caller fails after it")

    with pytest.raises(RuntimeError):
        claim_then_fail()
    with begin(engine) as conn:
        assert runs.in_flight(conn) == []
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None  # the slot is free
    with begin(engine) as conn:
        assert len(runs.in_flight(conn)) == 1


def test_server_errors_keep_their_class_and_the_session_goes_on(engine: Engine) -> None:
    plan = make_plan(engine)
    with pytest.raises(IntegrityError), begin(engine) as conn:  # no such run: foreign key
        runwrite.add_events(conn, [(10_000, "x", {}, NOW)])
    with pytest.raises(DataError), begin(engine) as conn:  # refused before it is sent
        runwrite.claim(conn, plan, SLOT, now=NOW, claimed_by="nul\x00byte")
    assert ours(engine) == ["jupcron_1"]  # the events' statement outlived its rollback
    with begin(engine) as conn:
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None
        runwrite.add_events(conn, [(1, "x", {}, NOW)])
    assert ours(engine) == ["jupcron_1", "jupcron_2"]  # each prepared once
    with begin(engine) as conn:
        assert len(runs.in_flight(conn)) == 1


def test_a_statement_the_session_forgot_is_prepared_again(engine: Engine) -> None:
    plan = make_plan(engine)
    with begin(engine) as conn:
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None
    with begin(engine) as conn:
        conn.execute(text("DEALLOCATE ALL"))  # as a session reset would
    with pytest.raises(ProgrammingError, match="does not exist"), begin(engine) as conn:
        runwrite.claim(conn, plan, SLOT + timedelta(hours=1), now=NOW)
    assert ours(engine) == []
    with begin(engine) as conn:  # the next transaction prepares them afresh, under new names
        run = runwrite.claim(conn, plan, SLOT + timedelta(hours=1), now=NOW)
        assert run is not None
    assert ours(engine) == ["jupcron_3", "jupcron_4"]  # the claim, then its event
    with begin(engine) as conn:
        assert [step for _, step, _ in runs.events(conn, run.id)] == ["claimed"]


def test_a_lost_connection_fails_its_transaction_and_is_replaced(
    engine: Engine, pg_url: str
) -> None:
    plan = make_plan(engine)
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    lost: list[int] = []

    def claim_then_lose_the_connection() -> None:
        with begin(engine) as conn:
            assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None
            lost.append(conn.connection.dbapi_connection.pgconn.backend_pid)
            with psycopg.connect(dsn, autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s)", (lost[0],))
            runwrite.add_events(conn, [(1, "x", {}, NOW)])  # on a connection that is gone

    with pytest.raises(StoreBusyError, match="database unavailable"):
        claim_then_lose_the_connection()
    pid = lost[0]
    with begin(engine) as conn:  # a new session: the statements prepared on it afresh
        assert conn.connection.dbapi_connection.pgconn.backend_pid != pid
        assert runs.in_flight(conn) == []  # the lost transaction left nothing
        assert runwrite.claim(conn, plan, SLOT, now=NOW) is not None
    assert ours(engine)


def test_the_group_commit_runs_a_write_again_after_the_session_forgot(engine: Engine) -> None:
    """The batch that meets a reset session fails; its writes run again one by one
    (as for any write that fails), which prepares the statements afresh: the run's
    step is stored once, and its caller never sees the error."""
    store = SqlRunStore(engine)  # group commit on, as the daemon runs
    run = store.claim(make_plan(engine), SLOT, now=NOW, trigger="schedule", claimed_by=None)
    assert run is not None
    with begin(engine) as conn:
        conn.execute(text("DEALLOCATE ALL"))
    moved, ok = store.advance(
        run, RunStatus.REQUESTED, now=NOW, expect=[RunStatus.PENDING], step="requested",
        detail={}, fields={"request_id": "req-1"},
    )  # fmt: skip
    assert ok
    assert moved.request_id == "req-1"
    assert store.steps(run.id) == [("claimed", {"status": "pending", "trigger": "schedule"}),
                                   ("requested", {})]  # fmt: skip
