"""Group commit: the writes of many threads in one transaction, each thread back
only once its own write is durable.

A thread that writes while no commit is under way leads: it begins a
transaction, takes every write queued by then (its own first), runs them in
order and commits; the others wait. Then it hands the lead to the first write
queued meanwhile, whose thread does the same for the next batch, and returns.
One write alone costs what a transaction of its own costs; eight workers
writing at once share one BEGIN, one COMMIT (one fsync on SQLite) and one
connection checkout.

The leaders of consecutive batches use one connection: the first takes it from
the pool, each hands it on with the lead, and the last one, finding nothing
queued, gives it back. A burst of writes pays one checkout (and, on PostgreSQL,
one liveness ping) instead of one a batch; an idle store holds no connection.
A batch that failed gives the connection back at once (the pool replaces it if
it is broken) and the next batch takes one afresh.

Every caller still returns only after the COMMIT that holds its write, so
"persist before the side effect" is kept: a crash at any instant loses only
writes whose callers had not returned, i.e. whose side effects never started.
A write that fails on its own (a bug, a constraint) is rolled back with its
batch, and the batch runs again one write per transaction, so only that caller
sees the error; a store that is down fails the whole batch, as it would have
failed each write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from jupcron.errors import StoreBusyError, StoreError
from jupcron.store.engine import begin, begin_on, store_busy

T = TypeVar("T")
MAX_BATCH = 64
Execute = Callable[[Connection, Sequence[Callable[[Connection], Any]]], list[Any]]


class _Signal:
    """Wakes the one thread that waits for it (a `threading.Event` without its
    Condition: a write makes one and waits on it, 1 us instead of 6). Setting it
    again before or after the wait changes nothing."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        with suppress(RuntimeError):  # already set: released once is enough
            self._lock.release()

    def wait(self) -> None:
        self._lock.acquire()


@dataclass
class _Write(Generic[T]):
    fn: Callable[[Connection], T]
    ready: _Signal = field(default_factory=_Signal)
    lead: bool = False  # woken to lead the next batch (not done yet)
    done: bool = False
    result: Any = None
    error: BaseException | None = None

    def finish(self, result: Any = None, error: BaseException | None = None) -> None:
        self.result, self.error, self.done = result, error, True
        self.ready.set()

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[no-any-return]


def _each(conn: Connection, writes: Sequence[Callable[[Connection], Any]]) -> list[Any]:
    return [write(conn) for write in writes]


class GroupCommit:
    """`execute(conn, writes)`: runs a transaction's writes, inside it, and gives
    their results (the run store's steps them side by side and puts their events in
    at the end: `jupcron.store.runbatch`); by default each is called in turn."""

    def __init__(
        self,
        engine: Engine,
        max_batch: int = MAX_BATCH,
        execute: Execute = _each,
    ) -> None:
        self.engine = engine
        self.max_batch = max(1, max_batch)
        self._execute = execute
        self._lock = threading.Lock()
        self._queue: list[_Write[Any]] = []
        self._busy = False  # a leader is at work
        self._conn: Connection | None = None  # the leaders' connection, while they follow on
        self.commits = 0  # transactions committed (for tests and metrics)
        self.writes = 0  # writes committed

    def run(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn` in a transaction shared with other threads' writes; its result
        once that transaction has committed."""
        write: _Write[T] = _Write(fn)
        with self._lock:
            self._queue.append(write)
            lead = not self._busy
            self._busy = True
        if not lead:
            write.ready.wait()
            if write.done:
                return write.outcome()
        try:
            self._lead()
        finally:
            self._hand_over()
        return write.outcome()

    def _take(self) -> list[_Write[Any]]:
        with self._lock:
            batch = self._queue[: self.max_batch]
            del self._queue[: len(batch)]
        return batch

    def _connection(self) -> Connection:
        """The connection the leaders share (taken from the pool by the first)."""
        if self._conn is None:
            try:
                self._conn = self.engine.connect()
            except (OperationalError, PoolTimeoutError) as exc:  # as `begin` reports them
                raise store_busy(exc) from exc
            except DBAPIError as exc:  # opened, but no database there ("file is not a database")
                raise StoreError(f"database unusable: {exc.orig or exc}") from exc
        return self._conn

    def _release(self) -> None:
        """Give the shared connection back to the pool (the leader only). One the
        driver found broken was invalidated by SQLAlchemy: the pool replaces it."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(Exception):  # a broken connection: the pool discards it
                conn.close()

    def _lead(self) -> None:
        batch: list[_Write[Any]] = []
        try:
            conn = self._connection()
            with begin_on(conn):
                batch = self._take()  # everything queued while we waited for the lock
                results = self._execute(conn, [write.fn for write in batch])
        except StoreBusyError as exc:  # the store is down or locked: every write fails
            self._release()
            for write in batch or self._take():
                write.finish(error=exc)
            return
        except Exception as exc:  # noqa: BLE001 - one write failed on its own: each alone, to see which
            self._release()
            if not batch:
                # the connection or its BEGIN failed before any write ran (the file is no
                # database, or not the one opened: `jupcron.store.engine`): every write
                # queued fails with it. Finished, none is left queued to lead a batch no
                # thread will run (that wedged every later write), nor back as ``None``
                for write in self._take():
                    write.finish(error=exc)
                return
            for write in batch:
                self._alone(write)
            return
        except BaseException as exc:  # the thread is going down: nothing was committed
            self._release()
            for write in batch:
                write.finish(error=exc)
            raise
        with self._lock:
            self.commits += 1
            self.writes += len(batch)
        for write, result in zip(batch, results, strict=True):
            write.finish(result)

    def _alone(self, write: _Write[Any]) -> None:
        try:
            with begin(self.engine) as conn:
                (result,) = self._execute(conn, [write.fn])
        except Exception as exc:  # noqa: BLE001 - handed to the caller, raised there
            write.finish(error=exc)
            return
        with self._lock:
            self.commits += 1
            self.writes += 1
        write.finish(result)

    def _hand_over(self) -> None:
        """Wake the first queued write to lead the next batch (with the connection), or
        give the connection back and stand down."""
        while True:
            with self._lock:
                if self._queue:
                    nxt = self._queue[0]
                    nxt.lead = True
                    nxt.ready.set()
                    return
                if self._conn is None:
                    self._busy = False
                    return
            self._release()  # still leading: a write queued meanwhile is woken next turn
