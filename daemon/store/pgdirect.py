"""PostgreSQL: the run path's statements sent straight through libpq.

A statement through a psycopg cursor costs ~30-45 us of Python on top of libpq's
own ~10 (its query conversion, prepared-statement bookkeeping and the generators
that drive each round trip), and a run makes about ten: a fifth of a run's CPU
on PostgreSQL went there. Each of `Prepared`'s statements is prepared once per
connection (a named server-side statement, its parameters typed by the casts in
its text) and executed by name. Parameters are dumped and rows loaded by
psycopg's own `Transformer` on the connection's adapters: the values the server
receives and the rows we read are those a cursor would give. `pipeline` sends a
round of them (a group commit's batch, `jupcron.store.runbatch`; `run` sends one)
in one round trip, in libpq's pipeline mode, and waits for the answers with the
GIL released.

What keeps it correct:
- **The transaction.** psycopg begins a transaction lazily, before a cursor's
  first statement; when ours comes first we send the same ``BEGIN`` (only on a
  connection with psycopg's default transaction settings: anything else goes
  through the cursor). The connection is then in a transaction as psycopg sees
  it (it reads libpq's status), and SQLAlchemy's COMMIT or ROLLBACK ends it.
- **The named statements.** psycopg's own prepared statements are off on our
  engines (`prepare_threshold=None`, `jupcron.store.engine.make_engine`): after a
  rollback it drops every statement of the session (``DEALLOCATE ALL``), ours
  included. A statement the server no longer knows (SQLSTATE 26000) is forgotten
  here, so the next transaction prepares it again.
- **Errors.** The server's error is raised as psycopg raises it (its class by
  SQLSTATE), a lost connection as `OperationalError`; the caller hands it to
  SQLAlchemy's handler, which invalidates a lost connection as for any statement.
- **Threads.** The connection's own lock is held for the round trip, as psycopg
  holds it for a cursor's.
- **A pipeline.** It is left only once every answer up to its sync point is read;
  one broken off half way (the server gone, a bug) closes the connection, which
  the pool then replaces.
"""

from __future__ import annotations

import select
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

import psycopg
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer

_STATE = "jupcron_pg_direct"  # key in a pooled connection's info: _Session
_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)


class _Session:
    """What one server session has of ours: its statements' names, and the
    psycopg `Transformer` that dumps and loads on its connection's adapters."""

    __slots__ = ("names", "pgconn", "prepared", "transformer")

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.pgconn = connection.pgconn
        self.names: dict[bytes, bytes] = {}  # statement text -> its name on the server
        self.prepared = 0  # names ever given on this session: a name is never given twice
        self.transformer = Transformer(connection)

    def name(self, sql: bytes) -> bytes:
        """A name never used on this session before (a statement prepared again after
        the server forgot it must not take a name another statement still has)."""
        self.prepared += 1
        return b"jupcron_%d" % self.prepared


def usable(connection: Any) -> bool:
    """Whether statements on this DBAPI connection may take the direct path: psycopg,
    inside transactions psycopg would open with a plain ``BEGIN``, no pipeline."""
    return (
        isinstance(connection, psycopg.Connection)
        and not connection.autocommit
        and connection.isolation_level is None
        and connection.read_only is None
        and connection.deferrable is None
        and connection.pgconn.pipeline_status == pq.PipelineStatus.OFF
    )


def run(
    info: dict[Any, Any], connection: psycopg.Connection[Any], sql: bytes, values: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """Execute `sql` (``$n`` placeholders, every one cast) with `values` on
    `connection` inside its transaction; the rows it returns. `info` is the pooled
    connection's: where the session's prepared statements are remembered. A
    `pipeline` of one statement: its ``BEGIN`` and ``PREPARE``, when needed, go in
    the same round trip."""
    return pipeline(info, connection, [(sql, values)])[0]


def pipeline(
    info: dict[Any, Any],
    connection: psycopg.Connection[Any],
    statements: Sequence[tuple[bytes, Sequence[Any]]],
    *,
    commit: bool = False,
) -> list[list[tuple[Any, ...]]]:
    """Execute `statements` (as `run` takes them) in one round trip, in libpq's
    pipeline mode, inside the connection's transaction (begun here if none is);
    with `commit`, the ``COMMIT`` goes in the same round trip. Each statement's rows,
    in order. The first error is raised once the whole round trip is read: the
    statements after it did not run, and the transaction is left failed (the caller
    rolls it back). The wait for the server releases the GIL."""
    session = _session(info, connection)
    with connection.lock:
        transformer = session.transformer
        params = [
            transformer.dump_sequence(values, [PyFormat.TEXT] * len(values))
            for _, values in statements
        ]
        pgconn = _live(connection)
        expected: list[bytes | int] = []  # per result: a statement's index, or what was sent
        naming: dict[bytes, bytes] = {}  # statements prepared in this round trip
        pgconn.enter_pipeline_mode()
        try:
            if pgconn.transaction_status == pq.TransactionStatus.IDLE:
                pgconn.send_query_params(b"BEGIN", None)
                expected.append(b"BEGIN")
            for index, ((sql, _), values) in enumerate(zip(statements, params, strict=True)):
                name = session.names.get(sql) or naming.get(sql)
                if name is None:
                    name = naming[sql] = session.name(sql)
                    pgconn.send_prepare(name, sql)
                    expected.append(sql)
                pgconn.send_query_prepared(name, values)
                expected.append(index)
            if commit:
                pgconn.send_query_params(b"COMMIT", None)
                expected.append(b"COMMIT")
            pgconn.pipeline_sync()
            _flush(pgconn)
            rows, error = _read(connection, session, expected, naming, len(statements))
            pgconn.exit_pipeline_mode()
        except BaseException:
            _abandon(connection)  # never left in pipeline mode, which nothing else expects
            raise
    if error is not None:
        if isinstance(error, errors.InvalidSqlStatementName):
            session.names.clear()  # the session was reset: prepared again from the next one
        raise error
    return rows


def _read(
    connection: psycopg.Connection[Any],
    session: _Session,
    expected: list[bytes | int],
    naming: dict[bytes, bytes],
    count: int,
) -> tuple[list[list[tuple[Any, ...]]], psycopg.Error | None]:
    """Every result of a pipeline up to its sync point: the statements' rows, and the
    first error among them."""
    pgconn = connection.pgconn
    rows: list[list[tuple[Any, ...]]] = [[] for _ in range(count)]
    error: psycopg.Error | None = None
    for what in expected:
        result = _result(pgconn)
        if result is None or _result(pgconn) is not None:  # one result, then the end of it
            raise psycopg.OperationalError("the server's answers are out of step")
        if result.status == pq.ExecStatus.PIPELINE_ABORTED:
            continue  # after the error: not run
        if error is None:
            try:
                _check(connection, result)
            except psycopg.Error as exc:
                error = exc
                continue
        if isinstance(what, int):
            if result.ntuples:
                session.transformer.set_pgresult(result, set_loaders=True)
                rows[what] = session.transformer.load_rows(0, result.ntuples, tuple)
        elif what == b"COMMIT" and result.command_status != b"COMMIT":
            error = psycopg.errors.InFailedSqlTransaction("the transaction was not committed")
        elif what not in (b"BEGIN", b"COMMIT"):  # a statement prepared: known from now on
            session.names[what] = naming[what]
    sync = _result(pgconn)
    if sync is None or sync.status != pq.ExecStatus.PIPELINE_SYNC:
        raise psycopg.OperationalError("the server's answers are out of step")
    return rows, error


def _result(pgconn: pq.abc.PGconn) -> pq.abc.PGresult | None:
    """The next result (``None`` at the end of a statement's), waiting for it with the
    GIL released (libpq's own wait in `get_result` would hold it)."""
    while pgconn.is_busy():
        _wait(pgconn, select.POLLIN)
        pgconn.consume_input()
    return pgconn.get_result()


def _flush(pgconn: pq.abc.PGconn) -> None:
    """Send all that libpq holds (the connection is non-blocking), reading meanwhile
    so that a server writing back never waits on us."""
    while pgconn.flush():
        if _wait(pgconn, select.POLLIN | select.POLLOUT) & select.POLLIN:
            pgconn.consume_input()


def _wait(pgconn: pq.abc.PGconn, events: int) -> int:
    poller = select.poll()
    poller.register(pgconn.socket, events)
    ready = poller.poll()
    return ready[0][1] if ready else 0


def _abandon(connection: psycopg.Connection[Any]) -> None:
    """A pipeline left half read cannot be used again: the connection is closed, and
    the pool replaces it (SQLAlchemy sees it closed)."""
    with suppress(Exception):
        connection.pgconn.finish()


def alive(connection: psycopg.Connection[Any]) -> None:
    """One ``SELECT 1`` round trip on `connection` (autocommit), through libpq: half
    the CPU of a cursor's (its creation, dumpers and generators). The server's error,
    or a connection found or left broken, is raised as psycopg raises it."""
    with connection.lock:
        _check(connection, _live(connection).exec_(b"SELECT 1"))


def _session(info: dict[Any, Any], connection: psycopg.Connection[Any]) -> _Session:
    session: _Session | None = info.get(_STATE)
    if session is None or session.pgconn is not connection.pgconn:
        session = info[_STATE] = _Session(connection)
    return session


def _live(connection: psycopg.Connection[Any]) -> pq.abc.PGconn:
    """The connection's libpq handle; `OperationalError` (as psycopg raises it) for
    one already broken, before anything is sent on it."""
    pgconn = connection.pgconn
    if pgconn.status != pq.ConnStatus.OK:
        raise psycopg.OperationalError("the connection is lost")
    return pgconn


def _check(connection: psycopg.Connection[Any], result: pq.abc.PGresult) -> None:
    if result.status in _OK:
        return
    if connection.pgconn.status != pq.ConnStatus.OK:  # the server went away meanwhile
        message = result.get_error_message(connection.info.encoding) or "the connection is lost"
        raise psycopg.OperationalError(message)
    raise errors.error_from_result(result, encoding=connection.info.encoding)
