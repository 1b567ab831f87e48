"""The loop turn's count of the plans (and of the runs in doubt) only reads: on a
SQLite file it must not take the write lock (the writer engine begins every
transaction ``BEGIN IMMEDIATE``), so a writer holding it (a `plans apply`'s write
phase, a burst of runs' group commit) neither makes the loop wait up to the busy
timeout nor marks the store unhealthy, which withholds systemd's watchdog ping: two
such waits in one loop turn (the count, then the heartbeat) outlast `WatchdogSec=60`
and the daemon is killed while the store was merely busy.

A real SQLite file under WAL; the write lock held by a real second connection, as
another process's writer holds it; a short busy timeout so the wait is an error now
instead of 30 s; systemd's side a real notify socket."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupcron.config import Config
from jupcron.listen.metrics import Metrics
from jupcron.plans.apply import apply_paths
from jupcron.service.notify import Notifier
from jupcron.service.status import Status
from jupcron.service.watchdog import Watchdog
from jupcron.store.engine import make_engine, session_factory
from jupcron.store.handle import Store
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.service import NotifyListener

BUSY_MS = 200  # the daemon's is 30 s: the wait for the lock shows as a failure here


@pytest.fixture
def store(sqlite_url: str) -> Iterator[Store]:
    engine = make_engine(sqlite_url, busy_ms=BUSY_MS)
    yield Store(engine, session_factory(engine))
    engine.dispose()


def write_lock(url: str) -> sqlite3.Connection:
    """Another writer, in the middle of its transaction (it holds the write lock)."""
    conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE plans SET description = description")
    return conn


def test_the_loop_turns_count_reads_beside_a_writer_and_the_watchdog_is_pinged(
    store: Store, sqlite_url: str, plan_files: PlanFiles, notify_socket: NotifyListener
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a"), swap_plan("b")]})
    apply_paths(store.factory, [folder], now=datetime.now(UTC))
    notifier = Notifier(notify_socket.env())
    config = Config.model_validate({"database": {"url": sqlite_url}, "plans": {"dir": str(folder)}})
    status = Status(config=lambda: config, metrics=Metrics(), notifier=notifier,
                    degraded=list)  # fmt: skip
    runtime: Any = SimpleNamespace(store=store)  # what the count reads through
    status.runtime = runtime
    watchdog = Watchdog(notifier, 1.0, health=lambda: status.store_ok)
    try:
        status.update(leader=True)
        assert status.store_ok
        assert status.plan_count == 2

        writer = write_lock(sqlite_url)
        try:
            folder = plan_files({"a.yaml": [swap_plan("a")]})  # b goes: the revision moves
            for turn in range(3):  # loop turns while the other writer holds the lock
                status.update(leader=True)
                assert status.store_ok, "a writer holding the lock made the store 'unhealthy'"
                pinged = watchdog.tick(now=float(turn))  # a ping due each turn
                assert pinged, "the watchdog ping was withheld while a writer wrote"
            assert status.plan_count == 2
        finally:
            writer.rollback()
            writer.close()
        apply_paths(store.factory, [folder], now=datetime.now(UTC))
        status.update(leader=True)
        assert status.store_ok
        assert status.plan_count == 1  # the count follows the store
        assert notify_socket.wait_for("WATCHDOG=1", count=3)
    finally:
        status.close()
        notifier.close()


def test_a_store_that_cannot_be_read_is_still_unhealthy(
    store: Store, sqlite_url: str, tmp_path: Path
) -> None:
    """Reading beside the writers is no blindness: a database that is gone (its file
    replaced by a folder, say) still fails the count and withholds the ping."""
    config = Config.model_validate({"database": {"url": sqlite_url}})
    status = Status(config=lambda: config, metrics=Metrics(), notifier=Notifier({}),
                    degraded=list)  # fmt: skip
    runtime: Any = SimpleNamespace(store=store)
    status.runtime = runtime
    try:
        status.update(leader=True)
        assert status.store_ok
        path = Path(sqlite_url.removeprefix("sqlite:///"))
        store.engine.dispose()
        status.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.mkdir()  # no database at that path any more
        status.update(leader=True)
        assert not status.store_ok
    finally:
        status.close()
