"""Leader election: only one daemon schedules; the others stand by (DESIGN §6).

PostgreSQL (`PgAdvisoryLeadership`): a session-level advisory lock held on a
dedicated connection outside the pool (autocommit, TCP keepalives and a TCP
user timeout, so a dead peer is noticed in seconds). `is_leader` is the lease
check the runner makes before every fire: one round trip on that connection;
if the connection is gone the lock is gone too, so we step down at once and
report not-leader. A standby calls ``acquire(block=True)`` and retries every
1–2 s. Safety does not rest on this lock alone: the unique (plan, slot) claim
in the store keeps a split-brain moment from firing a slot twice.

SQLite (`SqliteFileLeadership`): an exclusive ``flock`` on ``<dbfile>.lock``.
One file has one daemon: a second one refuses to start (`StoreError`).

    leadership = leadership_for(config.database.url, engine)
    leadership.acquire(block=True, stop=stop_event)   # standby until leader
    ...before each fire: if not leadership.is_leader(): back to standby
    leadership.release()
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import random
import threading
import time
from pathlib import Path
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from jupcron.errors import StoreBusyError, StoreError

log = structlog.get_logger(__name__)

RETRY_MIN = 1.0
RETRY_MAX = 2.0

# libpq settings for the leader connection: notice a silent peer within ~10 s
PG_CONNECT_PARAMS: dict[str, Any] = {
    "autocommit": True,
    "connect_timeout": 5,
    "application_name": "jupcron-leader",
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 2,
    "tcp_user_timeout": 8000,
}


class Leadership(Protocol):
    """Who may schedule. All methods are safe to call from any thread."""

    def acquire(
        self, block: bool = False, timeout: float | None = None, stop: threading.Event | None = None
    ) -> bool:
        """Try to become leader; with ``block``, retry until leader, ``timeout`` or ``stop``."""
        ...

    def is_leader(self) -> bool:
        """The lease check before a fire: re-verified, False at once when lost."""
        ...

    def release(self) -> None:
        """Step down (idempotent)."""
        ...


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name``."""
    digest = hashlib.sha256(f"jupcron-leader:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _wait(stop: threading.Event | None, seconds: float) -> bool:
    """Sleep ``seconds``; True when ``stop`` was set meanwhile."""
    if stop is None:
        time.sleep(seconds)
        return False
    return stop.wait(seconds)


def _pause(deadline: float | None, stop: threading.Event | None) -> bool:
    """Wait 1-2 s before the next try; False when the deadline or a stop came first."""
    pause = random.uniform(RETRY_MIN, RETRY_MAX)
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        pause = min(pause, left)
    return not _wait(stop, pause)


class PgAdvisoryLeadership:
    """A PostgreSQL session advisory lock on a dedicated connection."""

    def __init__(self, engine: Engine, name: str = "jupcron") -> None:
        self.engine = engine
        self.name = name
        self.key = lock_key(name)
        self._dbapi_error: type[Exception] = engine.dialect.loaded_dbapi.Error
        self._conn: Any = None
        self._held = False
        self._lock = threading.RLock()

    # -- connection ----------------------------------------------------------
    def _connect(self) -> Any:
        cargs, cparams = self.engine.dialect.create_connect_args(self.engine.url)
        return self.engine.dialect.connect(*cargs, **{**cparams, **PG_CONNECT_PARAMS})

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _scalar(self, sql: str, *params: Any) -> Any:
        cursor = self._conn.execute(sql, params)
        row = cursor.fetchone()
        return None if row is None else row[0]

    @property
    def backend_pid(self) -> int | None:
        """The server process holding our connection (for operators and tests)."""
        with self._lock:
            if self._conn is None:
                return None
            try:
                return int(self._scalar("SELECT pg_backend_pid()"))
            except self._dbapi_error:
                return None

    # -- Leadership ----------------------------------------------------------
    def _try_once(self) -> bool:
        with self._lock:
            if self._held and self._verify():
                return True
            try:
                if self._conn is None:
                    self._conn = self._connect()
                got = bool(self._scalar("SELECT pg_try_advisory_lock(%s)", self.key))
            except self._dbapi_error as exc:
                self._drop_connection()
                raise StoreBusyError(f"leader election: database unavailable: {exc}") from exc
            self._held = got
            if got:
                log.info("leader_acquired", lock=self.name, backend_pid=self.backend_pid)
            return got

    def acquire(
        self, block: bool = False, timeout: float | None = None, stop: threading.Event | None = None
    ) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        announced = False
        while True:
            try:
                if self._try_once():
                    return True
                if not block:
                    return False
                if not announced:
                    announced = True
                    log.info("standby_waiting", lock=self.name)
            except StoreBusyError as exc:
                if not block:
                    raise
                log.warning("leader_election_failed", lock=self.name, error=str(exc))
            if not _pause(deadline, stop):
                return False

    def _verify(self) -> bool:
        """One round trip on the lock's connection; on failure step down at once."""
        try:
            alive = bool(self._scalar("SELECT 1") == 1)
        except self._dbapi_error as exc:
            self._held = False
            self._drop_connection()
            log.warning("leader_lost", lock=self.name, reason="connection lost", error=str(exc))
            return False
        if not alive:  # pragma: no cover - SELECT 1 answers 1
            self._held = False
            self._drop_connection()
        return alive

    def is_leader(self) -> bool:
        with self._lock:
            if not self._held or self._conn is None:
                return False
            return self._verify()

    def release(self) -> None:
        with self._lock:
            if self._held and self._conn is not None:
                with contextlib.suppress(self._dbapi_error):
                    self._scalar("SELECT pg_advisory_unlock(%s)", self.key)
                log.info("leader_released", lock=self.name)
            self._held = False
            self._drop_connection()


class SqliteFileLeadership:
    """An exclusive ``flock`` on ``<dbfile>.lock``: one daemon per SQLite file.

    `acquire` without ``block`` raises `StoreError` when another process
    (or another object in this process) holds the file: there is no standby
    on SQLite, the second daemon must not start.
    """

    def __init__(self, database: str | os.PathLike[str]) -> None:
        self.database = Path(database)
        self.path = Path(f"{self.database}.lock")
        self._fd: int | None = None
        self._lock = threading.RLock()

    def _holder(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            pid = int(self.path.read_text().strip() or "0")
            if pid:
                return f" (held by pid {pid})"
        return ""

    def _try_once(self) -> bool:
        with self._lock:
            if self._fd is not None and self._same_file():
                return True
            self._close()
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as exc:
                raise StoreError(f"cannot open the lock file {self.path}: {exc.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._fd = fd
            log.info("leader_acquired", lock=str(self.path))
            return True

    def acquire(
        self, block: bool = False, timeout: float | None = None, stop: threading.Event | None = None
    ) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._try_once():
                return True
            if not block:
                raise StoreError(
                    f"another jupcron daemon is already using {self.database}{self._holder()}; "
                    "SQLite allows one daemon per file (use PostgreSQL for a standby)"
                )
            if not _pause(deadline, stop):
                return False

    def _same_file(self) -> bool:
        """The lock file we hold is still the one on disk (not deleted or replaced)."""
        assert self._fd is not None
        try:
            return os.fstat(self._fd).st_ino == os.stat(self.path).st_ino
        except OSError:
            return False

    def is_leader(self) -> bool:
        with self._lock:
            if self._fd is None:
                return False
            if self._same_file():
                return True
            log.warning("leader_lost", lock=str(self.path), reason="lock file removed")
            self._close()
            return False

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the descriptor drops the flock

    def release(self) -> None:
        with self._lock:
            if self._fd is not None:
                log.info("leader_released", lock=str(self.path))
            self._close()


class AlwaysLeader:
    """For an in-memory SQLite database: nothing to share, always leader."""

    def acquire(
        self, block: bool = False, timeout: float | None = None, stop: threading.Event | None = None
    ) -> bool:
        return True

    def is_leader(self) -> bool:
        return True

    def release(self) -> None:
        return None


def leadership_for(url: str, engine: Engine, name: str = "jupcron") -> Leadership:
    """The leader election that fits the database behind ``url``."""
    backend = make_url(url).get_backend_name()
    if backend == "postgresql":
        return PgAdvisoryLeadership(engine, name)
    if backend == "sqlite":
        database = make_url(url).database or ""
        if not database or database == ":memory:" or database.startswith("file::memory:"):
            return AlwaysLeader()
        return SqliteFileLeadership(database)
    raise StoreError(f"no leader election for the {backend} backend")
