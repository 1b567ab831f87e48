"""Leader election with one lock: only one daemon schedules (DESIGN §6).

SQLite (`SqliteFileLeadership`): an exclusive ``flock`` on ``<dbfile>.lock``, beside
the file itself (symlinks resolved; a ``file:`` URI read as the file it opens), so
one file has one lock whatever name a config gives it. One file has one daemon: a
second one refuses to start (`StoreError`). An in-memory SQLite database has nothing
to share (`AlwaysLeader`).

On PostgreSQL leadership is per wallet (`jupcron.service.shards`), not one lock.

    leadership = leadership_for(config.database.url)
    leadership.acquire(block=True, stop=stop_event)   # until leader
    ...before each fire: if not leadership.is_leader(): stop firing
    leadership.release()
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import threading
import time
from pathlib import Path
from typing import Protocol

import structlog
from sqlalchemy.engine import make_url

from jupcron.errors import StoreError
from jupcron.store.engine import sqlite_file

log = structlog.get_logger(__name__)

RETRY_MIN = 1.0
RETRY_MAX = 2.0


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


class SqliteFileLeadership:
    """An exclusive ``flock`` on ``<dbfile>.lock``: one daemon per SQLite file.

    `acquire` without ``block`` raises `StoreError` when another process
    (or another object in this process) holds the file: there is no standby
    on SQLite, the second daemon must not start.
    """

    def __init__(self, database: str | os.PathLike[str]) -> None:
        self.database = Path(database)
        # named after the file, not the path given: two configs naming one file two
        # ways (a symlink to it, say) took a lock file each, and both daemons led it
        self.path = Path(f"{self.database.resolve()}.lock")
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


def leadership_for(url: str) -> Leadership:
    """The leader election that fits the database behind ``url``."""
    backend = make_url(url).get_backend_name()
    if backend == "postgresql":
        raise StoreError("on PostgreSQL leadership is per wallet (jupcron.service.shards)")
    if backend == "sqlite":
        # the file the store opens (a `file:` URI's too: its text named no lock file)
        database = sqlite_file(url)
        return AlwaysLeader() if database is None else SqliteFileLeadership(database)
    raise StoreError(f"no leader election for the {backend} backend")
