"""The SQLite file deleted or replaced under a running daemon (a logrotate-like
``rm``, a restore from backup with ``mv backup.db jupcron.db``): SQLite's open
connections keep writing, without an error, into the file they opened, which is
gone from the path (deleted: lost at the daemon's exit) or no longer the database
(replaced: the restored file never hears of these runs, so a restart re-fires their
slots). A daemon that went on signing would record its runs nowhere. The store now
refuses every transaction once the file at its path is not the one it opened (a
`StoreError`, fatal: the daemon stops), so nothing more is ordered, signed or posted.

Real SQLite file, the emulator over loopback, real solders transactions; the
emulator's ledger counts what reached the API."""

from __future__ import annotations

import os
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jupcron.domain import RunStatus
from jupcron.errors import StoreError
from jupcron.store.engine import sqlite_file
from tests.fixtures.runner import Rig, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def _path(rig: Rig) -> Path:
    path = sqlite_file(rig.config.database.url)
    assert path is not None
    return path


def _posted(rig: Rig) -> tuple[int, int]:
    """(orders, executes) the emulator answered."""
    requests = rig.emulator.ledger.requests
    return requests.get("ultra_order", 0), requests.get("execute_ultra", 0)


def _delete(path: Path) -> None:
    """``rm jupcron.db*``: the database, its WAL and its shared memory."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _restore(path: Path, backup: Path) -> None:
    """``mv backup.db jupcron.db``: another file at the path (its WAL left beside)."""
    copy = path.with_name("restored.db")
    shutil.copy2(backup, copy)
    os.replace(copy, path)


def _first_run(rig: Rig, tmp_path: Path) -> tuple[Any, Path]:
    """One run that succeeds (the pool holds open connections on the file), and a
    backup of the file taken before it."""
    backup = tmp_path / "backup.db"
    source, copy = sqlite3.connect(_path(rig)), sqlite3.connect(backup)
    with copy:
        source.backup(copy)  # `sqlite3 jupcron.db ".backup backup.db"`
    source.close()
    copy.close()
    plan = rig.plan("swap")
    runner = rig.runner()
    first = outcome_of(runner.fire(plan, SLOT))
    assert first.status is RunStatus.SUCCEEDED, first.error
    return (runner, plan), backup


@pytest.mark.parametrize("mishap", ["deleted", "restored_from_backup"])
def test_no_run_is_ordered_once_the_database_file_is_gone(
    make_rig: RigFactory, tmp_path: Path, mishap: str
) -> None:
    rig = make_rig(loopback=True)
    (runner, plan), backup = _first_run(rig, tmp_path)
    before = _posted(rig)
    assert before == (1, 1)
    if mishap == "deleted":
        _delete(_path(rig))
    else:
        _restore(_path(rig), backup)

    with pytest.raises(StoreError, match="replaced or deleted"):
        runner.fire(plan, SLOT + timedelta(hours=1))
    assert _posted(rig) == before  # nothing ordered, nothing posted
    assert len(rig.landed()) == 1


def test_a_file_replaced_between_order_and_sign_signs_nothing(
    make_rig: RigFactory, tmp_path: Path
) -> None:
    """The order answered, then the file is restored from a backup before its
    ``requested`` write: that write is refused, so nothing is signed or posted."""
    rig = make_rig(loopback=True)
    (_runner, plan), backup = _first_run(rig, tmp_path)
    path = _path(rig)

    def restore_after_the_order(attempt: Any) -> None:
        if attempt.operation == "ultra_order" and attempt.http_status == 200:
            _restore(path, backup)

    runner = rig.runner(on_attempt=restore_after_the_order)
    with pytest.raises(StoreError, match="replaced or deleted"):
        runner.fire(plan, SLOT + timedelta(hours=1))
    assert _posted(rig) == (2, 1)  # ordered again, never posted
    assert len(rig.landed()) == 1


def test_the_same_file_moved_away_and_back_is_the_same_store(
    make_rig: RigFactory, tmp_path: Path
) -> None:
    """A rename away and back (the same file, device and inode) is no replacement: the
    next run goes on as before."""
    rig = make_rig(loopback=True)
    (runner, plan), _backup = _first_run(rig, tmp_path)
    path = _path(rig)
    path.rename(path.with_name("aside.db"))
    path.with_name("aside.db").rename(path)
    second = outcome_of(runner.fire(plan, SLOT + timedelta(hours=1)))
    assert second.status is RunStatus.SUCCEEDED, second.error
    assert _posted(rig) == (2, 2)
