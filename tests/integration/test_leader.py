"""Leader election with one lock: a SQLite file (flock); PostgreSQL has none (per wallet)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from jupcron.errors import StoreError
from jupcron.service.leader import AlwaysLeader, SqliteFileLeadership, leadership_for


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


def test_postgres_has_no_single_lock() -> None:
    with pytest.raises(StoreError, match="per wallet"):
        leadership_for("postgresql+psycopg://nobody@127.0.0.1:5432/none")


# -- SQLite ---------------------------------------------------------------------


def test_sqlite_second_daemon_refused_with_clear_message(sqlite_url: str) -> None:
    first, second = leadership_for(sqlite_url), leadership_for(sqlite_url)
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
    assert isinstance(leadership_for("sqlite://"), AlwaysLeader)
