"""Leader election on a real PostgreSQL (advisory lock) and on a SQLite file (flock)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from structlog.testing import capture_logs

from jupcron.errors import StoreBusyError, StoreError
from jupcron.service.leader import (
    AlwaysLeader,
    PgAdvisoryLeadership,
    SqliteFileLeadership,
    leadership_for,
    lock_key,
)
from jupcron.store.engine import make_engine


def psycopg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Engine]:
    engine = make_engine(pg_url)
    yield engine
    engine.dispose()


@pytest.fixture
def pair(pg_url: str, pg_engine: Engine) -> Iterator[tuple[PgAdvisoryLeadership, ...]]:
    first = leadership_for(pg_url, pg_engine)
    second = leadership_for(pg_url, pg_engine)
    assert isinstance(first, PgAdvisoryLeadership)
    assert isinstance(second, PgAdvisoryLeadership)
    yield first, second
    first.release()
    second.release()


def terminate(pg_url: str, pid: int) -> None:
    with psycopg.connect(psycopg_dsn(pg_url), autocommit=True) as conn:
        killed = conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
    assert killed == (True,)


def wait_line(proc: subprocess.Popen[str], word: str) -> None:
    """Read the child's stdout until ``word`` (its log lines come first)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == word:
            return
    raise AssertionError(f"child exited before printing {word!r}")


def finish(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


def test_lock_key_is_stable_and_signed_64_bit() -> None:
    assert lock_key("jupcron") == lock_key("jupcron")
    assert lock_key("jupcron") != lock_key("other")
    assert -(2**63) <= lock_key("jupcron") < 2**63


@pytest.mark.postgres
def test_only_one_of_two_acquires(pair: tuple[PgAdvisoryLeadership, ...]) -> None:
    first, second = pair
    assert first.acquire() is True
    assert second.acquire() is False
    assert first.is_leader() is True
    assert second.is_leader() is False
    assert first.acquire() is True  # already leader: still True, no second lock


@pytest.mark.postgres
def test_release_hands_over(pair: tuple[PgAdvisoryLeadership, ...]) -> None:
    first, second = pair
    assert first.acquire()
    first.release()
    assert first.is_leader() is False
    assert second.acquire() is True
    assert second.is_leader() is True


@pytest.mark.postgres
def test_killed_connection_steps_down_at_once_and_standby_takes_over(
    pg_url: str, pair: tuple[PgAdvisoryLeadership, ...]
) -> None:
    first, second = pair
    assert first.acquire()
    got: list[bool] = []
    standby = threading.Thread(target=lambda: got.append(second.acquire(block=True, timeout=30)))
    standby.start()
    pid = first.backend_pid
    assert pid is not None
    with capture_logs() as logs:
        terminate(pg_url, pid)
        assert first.is_leader() is False  # the very next lease check
    assert "leader_lost" in [e["event"] for e in logs]
    standby.join(timeout=30)
    assert got == [True]  # within the 30 s bound; retries run every 1-2 s
    assert second.is_leader() is True
    assert first.acquire() is False  # reconnects, finds the lock taken


@pytest.mark.postgres
def test_sigkilled_leader_process_is_replaced(pg_url: str, pg_engine: Engine) -> None:
    program = textwrap.dedent(
        """
        import sys, time
        from jupcron.service.leader import leadership_for
        from jupcron.store.engine import make_engine
        url = sys.argv[1]
        leadership = leadership_for(url, make_engine(url))
        assert leadership.acquire()
        print("leader", flush=True)
        time.sleep(120)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", program, pg_url], stdout=subprocess.PIPE, text=True
    )
    standby = leadership_for(pg_url, pg_engine)
    try:
        wait_line(proc, "leader")
        assert standby.acquire() is False
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert standby.acquire(block=True, timeout=10) is True
        assert standby.is_leader()
    finally:
        finish(proc)
        standby.release()


@pytest.mark.postgres
def test_blocking_acquire_stops_on_event(pair: tuple[PgAdvisoryLeadership, ...]) -> None:
    first, second = pair
    assert first.acquire()
    stop = threading.Event()
    got: list[bool] = []
    waiter = threading.Thread(target=lambda: got.append(second.acquire(block=True, stop=stop)))
    waiter.start()
    stop.set()
    waiter.join(timeout=10)
    assert got == [False]


def test_unreachable_postgres_is_store_busy() -> None:
    from tests.support.pgcluster import free_port

    url = f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none"
    engine = make_engine(url)
    leadership = leadership_for(url, engine)
    with pytest.raises(StoreBusyError, match="database unavailable"):
        leadership.acquire()
    assert leadership.acquire(block=True, timeout=0.5) is False
    engine.dispose()


# -- SQLite ---------------------------------------------------------------------


def test_sqlite_second_daemon_refused_with_clear_message(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    first, second = leadership_for(sqlite_url, engine), leadership_for(sqlite_url, engine)
    assert isinstance(first, SqliteFileLeadership)
    try:
        assert first.acquire() is True
        assert first.is_leader()
        with pytest.raises(StoreError, match="another jupcron daemon is already using") as info:
            second.acquire()
        assert f"pid {os.getpid()}" in str(info.value)
        assert "\n" not in str(info.value)
        assert second.is_leader() is False
        first.release()
        assert second.acquire() is True
    finally:
        first.release()
        second.release()
        engine.dispose()


def test_sqlite_lock_held_by_another_process(sqlite_url: str) -> None:
    database = make_url(sqlite_url).database
    program = textwrap.dedent(
        """
        import sys, time
        from jupcron.service.leader import SqliteFileLeadership
        leadership = SqliteFileLeadership(sys.argv[1])
        leadership.acquire()
        print("locked", flush=True)
        sys.stdin.readline()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", program, str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    mine = SqliteFileLeadership(str(database))
    try:
        assert proc.stdin is not None
        wait_line(proc, "locked")
        with pytest.raises(StoreError, match=f"held by pid {proc.pid}"):
            mine.acquire()
        proc.communicate("\n", timeout=10)
        assert mine.acquire() is True  # the lock died with the process
    finally:
        finish(proc)
        mine.release()


def test_sqlite_removed_lock_file_means_not_leader(tmp_path: Path) -> None:
    leadership = SqliteFileLeadership(tmp_path / "jupcron.db")
    assert leadership.acquire()
    leadership.path.unlink()
    assert leadership.is_leader() is False
    assert leadership.acquire() is True
    leadership.release()


def test_memory_sqlite_is_always_leader() -> None:
    engine = make_engine("sqlite://")
    assert isinstance(leadership_for("sqlite://", engine), AlwaysLeader)
    engine.dispose()
