"""Group commit on a real SQLite file and a real PostgreSQL: the writes of many
threads share transactions, each thread returns only once its own write is
committed (another connection sees it), a write that fails alone fails alone,
and a store that is down fails the writes waiting on it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, bindparam, event, text
from sqlalchemy.exc import IntegrityError

from jupcron.errors import StoreBusyError
from jupcron.store.engine import make_engine
from jupcron.store.group import GroupCommit, _Signal
from jupcron.store.models import StoreMeta
from jupcron.store.prepared import Prepared
from tests.support.wait import wait_until

INSERT = text("INSERT INTO store_meta (key, value) VALUES (:k, 'x')")
WRITERS = 8


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def insert(key: str) -> Callable[[Connection], str]:
    def write(conn: Connection) -> str:
        conn.execute(INSERT, {"k": key})
        return key

    return write


def visible(engine: Engine, key: str) -> bool:
    """Whether a fresh connection (another transaction) sees `key`."""
    with engine.connect() as conn:
        found = conn.execute(text("SELECT 1 FROM store_meta WHERE key = :k"), {"k": key})
        return found.first() is not None


def queued(group: GroupCommit) -> int:
    with group._lock:
        return len(group._queue)


def test_writes_queued_meanwhile_share_one_commit_and_each_is_durable_on_return(
    engine: Engine,
) -> None:
    group = GroupCommit(engine)
    gate = threading.Event()
    seen: dict[str, bool] = {}

    def first(conn: Connection) -> str:
        gate.wait(10)  # the leader is inside its transaction: the others queue up
        return insert("w0")(conn)

    def writer(key: str, fn: Callable[[Connection], str]) -> None:
        assert group.run(fn) == key
        seen[key] = visible(engine, key)  # committed before run() returned

    threads = [threading.Thread(target=writer, args=("w0", first))]
    threads[0].start()
    assert wait_until(lambda: group._busy and queued(group) == 0, timeout=5)  # w0 taken
    for n in range(1, WRITERS):
        threads.append(threading.Thread(target=writer, args=(f"w{n}", insert(f"w{n}"))))
        threads[-1].start()
    assert wait_until(lambda: queued(group) == WRITERS - 1, timeout=10)
    gate.set()
    for thread in threads:
        thread.join(10)
    assert seen == {f"w{n}": True for n in range(WRITERS)}
    assert group.writes == WRITERS
    assert group.commits == 2  # the leader's own, then the seven queued meanwhile


def test_consecutive_batches_share_one_connection_and_an_idle_group_holds_none(
    engine: Engine,
) -> None:
    checkouts: list[object] = []
    event.listen(engine, "checkout", lambda dbapi, record, proxy: checkouts.append(dbapi))
    group = GroupCommit(engine)
    gate = threading.Event()

    def first(conn: Connection) -> str:
        gate.wait(10)
        return insert("c0")(conn)

    threads = [threading.Thread(target=group.run, args=(first,))]
    threads[0].start()
    assert wait_until(lambda: group._busy and queued(group) == 0, timeout=5)
    for n in range(1, 4):
        threads.append(threading.Thread(target=group.run, args=(insert(f"c{n}"),)))
        threads[-1].start()
    assert wait_until(lambda: queued(group) == 3, timeout=10)
    gate.set()
    for thread in threads:
        thread.join(10)
    assert group.commits == 2
    assert len(checkouts) == 1  # the second batch's leader took the first one's connection
    assert engine.pool.checkedout() == 0  # nothing queued: given back
    assert not group._busy
    group.run(insert("c4"))  # a write after an idle spell takes one again, and gives it back
    assert len(checkouts) == 2
    assert engine.pool.checkedout() == 0
    assert all(visible(engine, f"c{n}") for n in range(5))


def one_batch(
    group: GroupCommit,
    writes: list[tuple[str, Callable[[Connection], str]]],
    catch: type[BaseException],
) -> dict[str, BaseException]:
    """Run `writes` (name, write) as one batch: the first leads and holds its
    transaction open until the others are queued behind it, in order. The errors
    of type `catch` each writer got, by name."""
    gate = threading.Event()
    errors: dict[str, BaseException] = {}

    def held(fn: Callable[[Connection], str]) -> Callable[[Connection], str]:
        def write(conn: Connection) -> str:
            gate.wait(10)
            return fn(conn)

        return write

    def writer(fn: Callable[[Connection], str], name: str) -> None:
        try:
            group.run(fn)
        except catch as exc:
            errors[name] = exc

    (first_name, first), *rest = writes
    lead = threading.Thread(target=writer, args=(held(first), first_name))
    lead.start()
    assert wait_until(lambda: group._busy and queued(group) == 0, timeout=5)
    others = [threading.Thread(target=writer, args=(fn, name)) for name, fn in rest]
    for n, thread in enumerate(others, start=1):
        thread.start()
        assert wait_until(lambda n=n: queued(group) == n, timeout=5)
    gate.set()
    for thread in [lead, *others]:
        thread.join(10)
    return errors


def test_a_write_that_fails_fails_alone(engine: Engine) -> None:
    group = GroupCommit(engine)

    def broken(conn: Connection) -> str:
        conn.execute(INSERT, {"k": "broken"})  # written, then the write fails
        raise ValueError("this write is wrong")

    writes = [
        ("first", insert("first")),
        ("a", insert("a")),
        ("broken", broken),
        ("b", insert("b")),
    ]
    errors = one_batch(group, writes, ValueError)
    assert list(errors) == ["broken"]
    assert engine.pool.checkedout() == 0
    assert [visible(engine, k) for k in ("first", "a", "broken", "b")] == [
        True,
        True,
        False,
        True,
    ]


def test_a_locked_store_fails_the_waiting_writes_then_works_again(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url, busy_ms=200)
    group = GroupCommit(engine)
    holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with pytest.raises(StoreBusyError, match="database is locked"):
            group.run(insert("k1"))
    finally:
        holder.rollback()
        holder.close()
    assert group.run(insert("k2")) == "k2"
    assert not visible(engine, "k1")
    assert visible(engine, "k2")
    assert not group._busy
    assert engine.pool.checkedout() == 0  # the failed batch gave its connection back
    engine.dispose()


def test_a_writes_signal_wakes_its_waiter_once_however_often_it_is_set() -> None:
    signal = _Signal()
    signal.set()
    signal.set()  # a write woken to lead, then finished: set twice, waited for once
    signal.wait()
    woke = threading.Event()
    later = _Signal()
    waiter = threading.Thread(target=lambda: (later.wait(), woke.set()))
    waiter.start()
    assert not woke.wait(0.05)  # not set: the waiter waits
    later.set()
    waiter.join(5)
    assert woke.is_set()
    later.set()  # after its waiter left: nothing happens


META = StoreMeta.__table__
PUT = Prepared(
    META.insert().values(
        key=bindparam("k", type_=META.c.key.type), value=bindparam("v", type_=META.c.value.type)
    )
)
RENAME = Prepared(
    META.update()
    .where(META.c.key == bindparam("b_old", type_=META.c.key.type))
    .values(key=bindparam("b_new", type_=META.c.key.type))
    .returning(META.c.key)
)


def test_a_batch_reads_what_it_wrote_through_either_kind_of_statement(engine: Engine) -> None:
    """Prepared statements (rows read or not) and SQLAlchemy's own in one write on the
    shared connection: what a later statement reads, and SQLAlchemy's results (rows,
    row counts), are those of everything before it, and the write runs once."""
    group = GroupCommit(engine)
    calls: list[int] = []

    def write(conn: Connection) -> tuple[Any, ...]:
        calls.append(1)
        PUT.run(conn, {"k": "p1", "v": "x"})  # not read: in flight on PostgreSQL
        PUT.run(conn, {"k": "p2", "v": "x"})
        renamed = RENAME.run(conn, {"b_old": "p2", "b_new": "p3"})  # read: waits for all
        counted = conn.execute(text("SELECT count(*) FROM store_meta")).scalar_one()
        PUT.run(conn, {"k": "p4", "v": "x"})
        updated = conn.execute(text("UPDATE store_meta SET value = 'y' WHERE key LIKE 'p%'"))
        keys = conn.execute(text("SELECT key FROM store_meta ORDER BY key")).scalars().all()
        return renamed, counted, updated.rowcount, keys

    assert group.run(write) == ([{"key": "p3"}], 2, 3, ["p1", "p3", "p4"])
    assert len(calls) == 1  # in its batch: not failed there and run again alone
    assert group.run(lambda conn: RENAME.run(conn, {"b_old": "gone", "b_new": "p5"})) == []
    assert [visible(engine, k) for k in ("p1", "p2", "p3", "p4")] == [True, False, True, True]


def test_a_statement_that_fails_fails_only_its_write(engine: Engine) -> None:
    """A duplicate key in an INSERT of one write: the batch is rolled back and run
    again one write at a time, so only the write that made it fails, with the
    database's error (not as a store outage)."""
    group = GroupCommit(engine)
    group.run(lambda conn: PUT.run(conn, {"k": "taken", "v": "x"}))

    def put(key: str) -> Callable[[Connection], str]:
        def write(conn: Connection) -> str:
            PUT.run(conn, {"k": key, "v": "x"})
            return key

        return write

    writes = [("d0", put("d0")), ("d1", put("d1")), ("dup", put("taken")), ("d2", put("d2"))]
    errors = one_batch(group, writes, IntegrityError)
    assert list(errors) == ["dup"]
    assert [visible(engine, k) for k in ("d0", "d1", "d2")] == [True, True, True]
    assert engine.pool.checkedout() == 0
    assert group.run(put("d3")) == "d3"  # and the next batch works
