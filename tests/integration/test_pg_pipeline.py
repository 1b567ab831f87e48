"""`jupcron.store.runbatch` on PostgreSQL: a batch of run writes is stepped side by
side and each round of statements goes to the server in one round trip (libpq's
pipeline mode), the last with the events and the COMMIT. It stores and returns
what the writes one by one do; a failure fails the whole batch and leaves the
session usable; a forgotten statement and a lost connection are handled as on
the one-by-one path."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import psycopg
import pytest
from sqlalchemy import Connection, Engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, ProgrammingError

from jupcron.domain import RunStatus
from jupcron.errors import StoreBusyError
from jupcron.store import runbatch, runs, runwrite, steps
from jupcron.store.engine import begin, make_engine
from jupcron.store.port import ExecuteValues, SwapEventValues
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.store.runstore import SqlRunStore
from jupcron.store.steps import Rows, Send, Steps
from tests.fixtures.runs import stored_plan

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
SLOT = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
IDLE = psycopg.pq.TransactionStatus.IDLE
execute = partial(runbatch.execute, deferred=runwrite.deferred_events)  # as the run store's


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    engine = make_engine(pg_url, pool_size=1, max_overflow=0)  # one session, seen again
    yield engine
    engine.dispose()


@pytest.fixture
def cursor_engine(pg_url: str) -> Iterator[Engine]:
    """Transactions psycopg begins with other settings: no direct path, no pipeline."""
    engine = make_engine(pg_url, isolation_level="READ COMMITTED", pool_size=1, max_overflow=0)
    yield engine
    engine.dispose()


def claims(plan: PlanRecord, count: int) -> list[Callable[[Connection], Steps[Any]]]:
    return [
        lambda conn, n=n: runwrite.claim_steps(conn, plan, SLOT + timedelta(hours=n), now=NOW)
        for n in range(count)
    ]


def result(run: RunRecord, status: str, amms: Sequence[str]) -> ExecuteValues:
    return ExecuteValues(
        run_id=run.id, signature=signature(run), operation="execute_swap", recorded_at=NOW,
        status=status, answer={"status": status},
        swap_events=tuple(SwapEventValues("a", "1", "b", "2", amm) for amm in amms),
    )  # fmt: skip


def signature(run: RunRecord) -> str:
    return f"sig-{run.scheduled_for:%H}"  # the same on either engine


def a_batch(engine: Engine, name: str) -> dict[str, Any]:
    """Claims, then a batch mixing every kind of run write: a plain read, advances with
    attempts and an execute result, a repeated result (it replaces the first), a
    refused advance that reads its run back, events; what each returned and what
    was stored."""
    plan = stored_plan(engine, name, now=NOW)
    with begin(engine) as conn:
        first = execute(conn, claims(plan, 4))
    a, b, c, d = first
    later = NOW + timedelta(seconds=1)
    with begin(engine) as conn:
        runwrite.record_execute(conn, result(c, "Failed", ["old"]))

    def advance(conn: Connection, run: RunRecord, results: Sequence[ExecuteValues]) -> Steps[Any]:
        yield from runwrite.record_events_steps(conn, [(run.id, "note", {"k": 1}, later)])
        for values in results:
            yield from runwrite.record_execute_steps(conn, values)
        return (
            yield from runwrite.advance_steps(
                conn, run.id, RunStatus.SUBMITTED, now=later, expect=[RunStatus.PENDING],
                step="submitted", detail={"by": "test"},
                before=[(run.id, "attempt", {"http_status": 200}, later)],
                fields={"signature": signature(run), "slot": 2**40},
            )
        )  # fmt: skip

    def refused(conn: Connection, run: RunRecord) -> Steps[Any]:
        moved = yield from runwrite.advance_steps(
            conn, run.id, RunStatus.SUCCEEDED, now=later, expect=[RunStatus.SIGNED],
            step="succeeded", detail={},
        )  # fmt: skip
        assert moved is None
        attempt = [(run.id, "attempt", {"http_status": 503}, later)]
        yield from runwrite.record_events_steps(conn, attempt, wait=True)
        return runs.get(conn, run.id)  # reads the bump it waited for

    def plain(conn: Connection) -> str:  # first: its read begins the transaction
        found = runs.get(conn, a.id)
        return str(found.status) if found else "gone"

    with begin(engine) as conn:
        read, *second = execute(conn, [
            partial(steps.at_once, plain),
            lambda conn: advance(conn, a, [result(a, "Success", ["x", "y"])]),
            lambda conn: advance(conn, b, []),
            lambda conn: advance(conn, c, [result(c, "Success", ["new"])]),
            lambda conn: refused(conn, d),
        ])  # fmt: skip
    with begin(engine) as conn:
        stored = [runs.get(conn, run.id) for run in first]
        events = [[step for _, step, _ in runs.events(conn, run.id)] for run in first]
        amms = conn.execute(text(
            "SELECT e.amm FROM swap_events e JOIN execute_results r ON r.id = e.result_id "
            "WHERE r.run_id = ANY(:ids) ORDER BY r.run_id, e.position"
        ), {"ids": [run.id for run in first]}).scalars().all()  # fmt: skip
    comparable = lambda r: {k: v for k, v in vars(r).items()  # noqa: E731
                            if k not in ("id", "plan_id")}  # fmt: skip
    return {
        "read": read,
        "claimed": [comparable(run) for run in first],
        "returned": [
            comparable(second[3]),
            *(sorted(set(moved) - {"updated_at"}) for moved in second[:3]),
        ],
        "stored": [comparable(run) for run in stored if run is not None],
        "events": events,
        "amms": amms,
    }


def test_a_pipelined_batch_stores_and_returns_what_the_writes_one_by_one_do(
    engine: Engine, cursor_engine: Engine
) -> None:
    pipelined = a_batch(engine, "piped")
    one_by_one = a_batch(cursor_engine, "cursor")
    assert pipelined == one_by_one
    assert pipelined["read"] == "pending"
    assert pipelined["events"][0] == ["claimed", "note", "attempt", "submitted"]
    assert pipelined["events"][3] == ["claimed", "attempt"]
    assert pipelined["stored"][3]["attempts"] == 1  # the refused advance read its bump
    assert pipelined["amms"] == ["x", "y", "new"]  # the second answer replaced the first


def test_the_batch_is_committed_in_its_last_round_trip(engine: Engine, pg_url: str) -> None:
    """On the pipelined path the COMMIT goes with the last round: the transaction is
    over when `execute` returns, before SQLAlchemy's commit (which finds nothing to
    do), and another session sees the rows."""
    plan = stored_plan(engine, "p", now=NOW)
    with begin(engine) as conn:
        claimed = execute(conn, claims(plan, 3))
        assert conn.connection.dbapi_connection.pgconn.transaction_status == IDLE
        other = make_engine(pg_url)
        try:
            with begin(other) as seen:
                assert len(runs.in_flight(seen)) == 3
        finally:
            other.dispose()
    assert [run.status for run in claimed] == [RunStatus.PENDING] * 3


def test_the_writes_take_one_round_trip_a_step(engine: Engine) -> None:
    """Eight claims go to the server together: one round, whatever their number; their
    events, which nothing waits for, are left for the next (here the last, with the
    COMMIT); a write that waits twice makes two."""
    plan = stored_plan(engine, "p", now=NOW)
    rounds: list[int] = []

    def counted(conn: Connection) -> Callable[[Sequence[Send]], list[Rows]]:
        def execute(sends: Sequence[Send]) -> list[Rows]:
            rounds.append(len(sends))
            return runbatch.round_trip(conn, sends)

        return execute

    with begin(engine) as conn:
        made, rest = steps.interleave([write(conn) for write in claims(plan, 8)], counted(conn))
        assert rounds == [8]
        assert len(rest) == 8  # each claim's event: no claim waits for it
        runbatch.round_trip(conn, rest, commit=True)
        assert conn.connection.dbapi_connection.pgconn.transaction_status == IDLE
    assert all(isinstance(run, RunRecord) for run in made)

    with begin(engine) as conn:
        values = result(made[0], "Failed", ["old"])
        again = result(made[0], "Success", ["new"])
        rounds.clear()
        _, rest = steps.interleave([runwrite.record_execute_steps(conn, values)], counted(conn))
        assert (rounds, len(rest)) == ([1], 1)  # the swap event goes with the next round
        runbatch.round_trip(conn, rest)
        rounds.clear()
        _, rest = steps.interleave([runwrite.record_execute_steps(conn, again)], counted(conn))
        assert rounds == [1, 1]  # the first answer is there: the newer one replaces it
        assert len(rest) == 2  # the older swap events' DELETE, the newer one's INSERT


def test_a_failure_fails_the_whole_batch_and_the_session_goes_on(engine: Engine) -> None:
    """A write in the middle fails (its event has no run): the writes after it in the
    round did not run, nothing of the batch is committed, and the next batch on the
    same session works. The group commit then runs each write alone: only the bad
    one fails (as `tests/integration/test_prepared.py` shows through it)."""
    plan = stored_plan(engine, "p", now=NOW)
    bad = lambda conn: runwrite.record_events_steps(conn, [(10**6, "x", {}, NOW)])  # noqa: E731
    with pytest.raises(IntegrityError), begin(engine) as conn:
        execute(conn, [*claims(plan, 2), bad, *claims(plan, 4)[2:]])
    with begin(engine) as conn:
        assert runs.in_flight(conn) == []
        made = execute(conn, claims(plan, 4))
    assert all(run is not None for run in made)


def test_a_statement_the_session_forgot_fails_the_batch_then_is_prepared_again(
    engine: Engine,
) -> None:
    store = SqlRunStore(engine)  # group commit on, as the daemon runs
    plan = stored_plan(engine, "p", now=NOW)
    run = store.claim(plan, SLOT, now=NOW, trigger="schedule", claimed_by=None)
    assert run is not None
    with begin(engine) as conn:
        conn.execute(text("DEALLOCATE ALL"))
    with pytest.raises(ProgrammingError, match="does not exist"), begin(engine) as conn:
        execute(conn, claims(plan, 3)[1:])
    with begin(engine) as conn:
        made = execute(conn, claims(plan, 3)[1:])
    assert all(run is not None for run in made)


def test_a_lost_connection_fails_the_batch_and_is_replaced(engine: Engine, pg_url: str) -> None:
    plan = stored_plan(engine, "p", now=NOW)
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    lost: list[int] = []

    def claims_on_a_lost_connection() -> None:
        with begin(engine) as conn:
            assert execute(conn, claims(plan, 1))[0] is not None
            lost.append(conn.connection.dbapi_connection.pgconn.backend_pid)
        with begin(engine) as conn:
            assert conn.connection.dbapi_connection.pgconn.backend_pid == lost[0]
            with psycopg.connect(dsn, autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s)", (lost[0],))
            execute(conn, claims(plan, 3)[1:])

    with pytest.raises(StoreBusyError, match="database unavailable"):
        claims_on_a_lost_connection()
    with begin(engine) as conn:
        assert conn.connection.dbapi_connection.pgconn.backend_pid != lost[0]
        assert len(runs.in_flight(conn)) == 1  # the first batch's claim only
        made = execute(conn, claims(plan, 3)[1:])
    assert all(run is not None for run in made)


def small_send_buffer(conn: Connection) -> None:
    """The session's socket takes little at once (SO_SNDBUF of 4 KiB, set on a
    duplicate of it: the socket is the same)."""
    fd = conn.connection.dbapi_connection.pgconn.socket
    with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as same:
        same.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)


def test_a_round_larger_than_the_socket_takes_is_sent_whole(engine: Engine) -> None:
    """64 claims and an execute answer of 4 MiB in one round, on a socket that takes
    a few KiB at once: the round is sent in parts, waiting for the socket, while the
    server's answers are read (a pipeline that only wrote would stall here)."""
    plan = stored_plan(engine, "p", now=NOW)
    with begin(engine) as conn:
        made = execute(conn, claims(plan, 64))
    big = "x" * (4 << 20)
    values = ExecuteValues(
        run_id=made[0].id, signature="sig-big", operation="execute_swap", recorded_at=NOW,
        status="Success", answer={"status": "Success", "blob": big},
    )  # fmt: skip
    more = [
        lambda conn, n=n: runwrite.claim_steps(
            conn, plan, SLOT + timedelta(days=10, hours=n), now=NOW
        )
        for n in range(64)
    ]
    with begin(engine) as conn:
        small_send_buffer(conn)
        result_id, *claimed = execute(
            conn, [lambda conn: runwrite.record_execute_steps(conn, values), *more]
        )
    assert all(run is not None for run in claimed)
    with begin(engine) as conn:
        stored = conn.execute(
            text("SELECT length(answer::text) FROM execute_results WHERE id = :id"),
            {"id": result_id},
        ).scalar_one()
        assert stored > 4 << 20
        assert len(runs.in_flight(conn)) == 128


def test_a_write_that_fails_between_rounds_leaves_nothing(engine: Engine) -> None:
    """A write raising after its first round (a bug, say) ends the batch there: the
    claims already sent are rolled back with it, and the session goes on."""
    plan = stored_plan(engine, "p", now=NOW)

    def fails_after_a_round(conn: Connection) -> Steps[None]:
        claimed = yield from runwrite.claim_steps(conn, plan, SLOT - timedelta(days=1), now=NOW)
        assert claimed is not None
        raise LookupError("a bug after the first round")

    with pytest.raises(LookupError, match="a bug"), begin(engine) as conn:
        execute(conn, [*claims(plan, 3), fails_after_a_round])
    with begin(engine) as conn:
        assert conn.connection.dbapi_connection.pgconn.transaction_status == IDLE
        assert runs.in_flight(conn) == []
        made = execute(conn, claims(plan, 3))
    assert all(run is not None for run in made)
