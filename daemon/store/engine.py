"""Engines and sessions for SQLite and PostgreSQL, with the settings money needs.

SQLite: WAL, ``synchronous=FULL`` (a committed run survives power loss), a
busy timeout, foreign keys on; a new database file is created 0600 before
SQLite opens it, and SQLite gives its -wal and -shm files the same mode
(whatever the umask); every transaction, once begun, checks that the file at the path is
still the one opened (`SameFile`: one deleted or restored under a running daemon is
refused, not written into). PostgreSQL: a connect timeout (`PG_CONNECT_TIMEOUT_S`);
pre-ping, so a restarted server costs one failed checkout, not a crash (a
connection is pinged each time it is taken from the pool; the group commit keeps
one across a burst of batches and pings once);
the run path's statements go through libpq directly (`jupcron.store.pgdirect`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote

from sqlalchemy import Connection, Engine, RootTransaction, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import StoreBusyError, StoreError
from jupcron.private import create_private
from jupcron.urls import url_problem

SQLITE_BUSY_MS = 30_000
# how long a PostgreSQL connection may take to open: a server that never answers (a
# dropped route, a firewall) is an error after this, not a command that hangs for ever
PG_CONNECT_TIMEOUT_S = 10
# libpq's TCP settings for every pooled PostgreSQL connection (the URL's own win): a
# server host that vanishes without a word (a failover, a dropped route) is noticed in
# about 25 s, by keepalives while a statement waits and by the unacknowledged-data
# limit while one is sent; with the kernel's defaults a write waited 15 minutes or
# more, and with it the group commit and every write queued behind it
PG_TCP: dict[str, int] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}
T = TypeVar("T")


def _parse(url: str) -> URL:
    problem = url_problem(url)
    if problem is not None:
        raise StoreError(f"database.url {problem}")
    return make_url(url)


def sqlite_file(url: str) -> Path | None:
    """The absolute path of the file a SQLite URL names; None for PostgreSQL or memory."""
    parsed = _parse(url)
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):  # a SQLite URI (uri=true)
        database = unquote(database.removeprefix("file:"))
        if not database or database.startswith(":memory:") or parsed.query.get("mode") == "memory":
            return None
    return Path(database).absolute()


def make_engine(
    url: str, *, busy_ms: int = SQLITE_BUSY_MS, bounded_locks: bool = True, **kwargs: Any
) -> Engine:
    """An engine for `url`; the SQLite file's folder must exist (the file is created
    on first use: only writing commands should call this, read-only ones `open_existing`).
    SQLite waits up to `busy_ms` for another writer's lock before a write fails as busy;
    so does PostgreSQL for another session's lock (``lock_timeout``), unless
    `bounded_locks` is off (the migrations, which wait for another upgrade on purpose)."""
    parsed = _parse(url)
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_file(url)
        if path is not None and not path.parent.is_dir():
            raise StoreError(
                f"cannot create the database {path}: its folder {path.parent} does not exist"
            )
        engine = create_engine(parsed, connect_args={"timeout": busy_ms / 1000}, **kwargs)
        if path is not None and parsed.query.get("mode") not in ("ro", "rw"):  # may create it
            event.listen(engine, "do_connect", _private_file(path))
        event.listen(engine, "connect", partial(_sqlite_pragmas, busy_ms))
        event.listen(engine, "begin", _sqlite_begin)
        if path is not None:
            same = SameFile(path)
            event.listen(engine, "connect", same.opened)
            event.listen(engine, "begin", same.check)  # after the BEGIN: under its lock
        return engine
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        # psycopg's own prepared statements off: after a rollback it would drop every
        # statement of the session, the run path's (`jupcron.store.pgdirect`) included
        connect_args = {"prepare_threshold": None, **kwargs.pop("connect_args", {})}
        for name, value in {"connect_timeout": PG_CONNECT_TIMEOUT_S, **PG_TCP}.items():
            if name not in parsed.query:  # the URL's own wins
                connect_args.setdefault(name, value)
        engine = create_engine(parsed, pool_pre_ping=True, connect_args=connect_args, **kwargs)
    except NoSuchModuleError as exc:
        raise StoreError(f"no database driver for {parsed.drivername}") from exc
    except ModuleNotFoundError as exc:
        raise StoreError(
            "PostgreSQL needs the 'postgres' extra: pip install 'jupcron[postgres]'"
        ) from exc
    if bounded_locks:
        event.listen(engine, "connect", partial(_pg_lock_timeout, busy_ms))
    return engine


def open_existing(url: str, **kwargs: Any) -> Engine:
    """An engine on a database that must exist already: what every command but
    `jupcron db upgrade` uses, so a read-only command (or a wrong relative path)
    never creates a SQLite file, nor writes one into an empty file. A missing (or
    empty) file is a `StoreError` naming its absolute path; the file is opened
    read-write (WAL needs that) but never created, even if it disappears later."""
    path = sqlite_file(url)
    if path is None:
        return make_engine(url, **kwargs)
    if not path.is_file() or path.stat().st_size == 0:  # an empty file is none yet either
        empty = " (an empty file)" if path.is_file() else ""
        raise StoreError(
            f"no database at {path}{empty}: check database.url (a relative path is relative "
            "to the config file's folder), or create it with 'jupcron db upgrade'"
        )
    parsed = _parse(url)
    if (parsed.database or "").startswith("file:"):
        return make_engine(url, **kwargs)  # a URI already: its own mode applies
    # the driver's URI form with mode=rw opens the file but never creates it
    query = {**parsed.query, "mode": "rw", "uri": "true"}
    uri = parsed.set(database=f"file:{quote(str(path))}", query=query)
    return make_engine(uri.render_as_string(hide_password=False), **kwargs)


class SameFile:
    """The SQLite file an engine opened is still the one at its path, checked at the
    begin of each transaction (one ``stat``).

    SQLite's open connections write to the file they opened: one deleted (``rm``) or
    replaced (``mv backup.db jupcron.db``, a restore) under them takes their writes
    without an error, into a file that is lost at the exit or is no longer the
    database, and a daemon would go on ordering and signing runs it records nowhere
    (the restored file, not knowing them, would have a restart fire their slots
    again). So once the path names another file, or none, every transaction is
    refused, a `StoreError` (fatal: the daemon stops; a human puts the right file
    back and restarts it). The file is the one the engine's first connection found;
    the same file renamed away and back is still it (device and inode)."""

    __slots__ = ("identity", "path")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.identity: tuple[int, int] | None = None

    def _found(self) -> tuple[int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def opened(self, _dbapi_conn: Any, _record: Any) -> None:
        """A ``connect`` hook: the first connection's file is the engine's."""
        if self.identity is None:
            self.identity = self._found()

    def check(self, conn: Any) -> None:
        """A ``begin`` hook: refuse the transaction unless the path is the file opened."""
        found = self._found()
        if found is not None and found == self.identity:
            return
        driver = conn.connection.driver_connection
        with suppress(sqlite3.Error):
            if driver.in_transaction:  # SQLAlchemy never saw it begin: end it here
                driver.execute("ROLLBACK")
        what = "deleted" if found is None else "replaced by another file"
        raise StoreError(
            f"the database file {self.path} was replaced or deleted ({what}) while this "
            "process had it open: nothing more is written to it, nor signed; put the "
            "right file back and restart"
        )


def _private_file(path: Path) -> Any:
    """A ``do_connect`` hook: create the database file 0600 just before SQLite would."""

    def create(*_args: Any) -> None:
        try:
            create_private(path)
        except OSError as exc:
            raise StoreError(f"cannot create the database file {path}: {exc.strerror}") from None

    return create


def open_reader(url: str) -> Engine:
    """`open_existing`, for readers beside a running daemon (the status page): it can
    only read (SQLite ``query_only``; PostgreSQL sessions ``READ ONLY``), and SQLite
    transactions begin DEFERRED, so a reader takes no write lock and, under WAL,
    never holds up the daemon's writers (nor they it)."""
    engine = open_existing(url)
    if engine.dialect.name == "sqlite":
        event.remove(engine, "begin", _sqlite_begin)
        event.listen(engine, "begin", _sqlite_begin_reading)
        event.listen(engine, "connect", _sqlite_query_only)
    else:
        event.listen(engine, "connect", _postgresql_read_only)
    return engine


def reader_of(engine: Engine) -> Engine:
    """An engine that reads `engine`'s database beside its writers: on a SQLite file,
    a second engine whose transactions begin DEFERRED (no write lock; under WAL it
    never waits for a writer), `engine` itself otherwise (PostgreSQL's readers never
    wait). The caller disposes it when it is not `engine`."""
    url = engine.url.render_as_string(hide_password=False)
    if engine.dialect.name != "sqlite" or sqlite_file(url) is None:
        return engine
    reader = make_engine(url)
    event.remove(reader, "begin", _sqlite_begin)
    event.listen(reader, "begin", _sqlite_begin_reading)
    event.listen(reader, "connect", _sqlite_query_only)
    return reader


def _sqlite_query_only(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.execute("PRAGMA query_only=ON")


def _sqlite_begin_reading(conn: Any) -> None:
    try:
        conn.connection.driver_connection.execute("BEGIN")
    except sqlite3.Error as exc:
        raise DBAPIError.instance("BEGIN", None, exc, sqlite3.Error) from exc


def _postgresql_read_only(dbapi_conn: Any, _record: Any) -> None:
    autocommit = dbapi_conn.autocommit
    dbapi_conn.autocommit = True
    try:
        dbapi_conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    finally:
        dbapi_conn.autocommit = autocommit


def _pg_lock_timeout(busy_ms: int, dbapi_conn: Any, _record: Any) -> None:
    """A session's wait for another session's lock, at most `busy_ms` (then the
    statement fails as a busy store, as on SQLite). Unbounded, a run's row held by an
    operator's open psql transaction (or a ``VACUUM FULL``) held the write for as long,
    and with it the group commit's leader and every write queued behind it: nothing
    claimed, settled or said. Set for the session, and committed (a rollback would undo
    it), so that a connection pooler's startup-parameter rules do not apply."""
    with dbapi_conn.cursor() as cur:
        cur.execute(f"SET lock_timeout = {int(busy_ms)}")
    dbapi_conn.commit()


def _sqlite_pragmas(busy_ms: int, dbapi_conn: Any, _record: Any) -> None:
    # the driver's own transaction handling is off; we BEGIN ourselves (below)
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_begin(conn: Any) -> None:
    # IMMEDIATE takes the write lock at BEGIN: no deadlocked upgrades from read to write.
    # Straight to the driver: SQLAlchemy's statement machinery is a cost per transaction.
    try:
        conn.connection.driver_connection.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:  # wrapped as SQLAlchemy would: `transaction` translates it
        raise DBAPIError.instance("BEGIN IMMEDIATE", None, exc, sqlite3.Error) from exc


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def store_busy(exc: OperationalError | PoolTimeoutError) -> StoreBusyError:
    """The error a caller sees for a store that is down or locked, or whose every
    pooled connection stayed in use for the pool's timeout (SQLite: the threads that
    hold them wait for another writer's lock): busy for a moment all the same."""
    return StoreBusyError(f"database unavailable: {getattr(exc, 'orig', None) or exc}")


@contextmanager
def _store_errors(start: Callable[[], AbstractContextManager[T]]) -> Iterator[T]:
    """The unit of work `start` opens, a store that is down or locked (or with no
    pooled connection free) raised as `StoreBusyError` (from the checkout, the BEGIN,
    a statement or the COMMIT alike)."""
    try:
        with start() as unit:
            yield unit
    except (OperationalError, PoolTimeoutError) as exc:
        raise store_busy(exc) from exc


def transaction(factory: sessionmaker[Session]) -> AbstractContextManager[Session]:
    """One unit of work: commit on success, roll back on error; store errors translated."""
    return _store_errors(factory.begin)


def begin(engine: Engine) -> AbstractContextManager[Connection]:
    """`transaction` on a bare connection, for hot paths with Core statements only."""
    return _store_errors(engine.begin)


def begin_on(connection: Connection) -> AbstractContextManager[RootTransaction]:
    """`begin` on a connection already checked out (kept across transactions)."""
    return _store_errors(connection.begin)


def dialect_insert(dialect: str) -> Any:
    """The INSERT construct with ON CONFLICT of `dialect` ("postgresql", else SQLite's).
    Imported on first use: a command on SQLite does not load PostgreSQL's dialect."""
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert
    from sqlalchemy.dialects import sqlite

    return sqlite.insert
