"""Engines and sessions for SQLite and PostgreSQL, with the settings money needs.

SQLite: WAL, ``synchronous=FULL`` (a committed run survives power loss), a
busy timeout, foreign keys on. PostgreSQL: pre-ping, so a restarted server
costs one failed checkout, not a crash.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from daemon.config import mask_url
from daemon.errors import StoreBusyError, StoreError

SQLITE_BUSY_MS = 30_000


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for `url`; the SQLite file's folder must exist."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"database.url is not a valid URL: {mask_url(url)}") from exc
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:":
            folder = Path(database).parent
            if not folder.is_dir():
                raise StoreError(f"database folder does not exist: {folder}")
        engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_MS / 1000}, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        return create_engine(parsed, pool_pre_ping=True, **kwargs)
    except NoSuchModuleError as exc:
        raise StoreError(f"no database driver for {parsed.drivername}") from exc
    except ModuleNotFoundError as exc:
        raise StoreError(
            "PostgreSQL needs the 'postgres' extra: pip install 'jupcron[postgres]'"
        ) from exc


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # the driver's own transaction handling is off; we BEGIN ourselves (below)
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
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


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit on success, roll back on error; store errors translated."""
    try:
        with factory.begin() as session:
            yield session
    except OperationalError as exc:
        raise StoreBusyError(f"database unavailable: {exc.orig or exc}") from exc


@contextmanager
def begin(engine: Engine) -> Iterator[Connection]:
    """`transaction` on a bare connection, for hot paths with Core statements only."""
    try:
        with engine.begin() as connection:
            yield connection
    except OperationalError as exc:
        raise StoreBusyError(f"database unavailable: {exc.orig or exc}") from exc
