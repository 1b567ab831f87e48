"""A store that reads but takes no write (its disk full) is down for the daemon's
health: the loop turn's count still read, so `store_ok` stayed true, the watchdog was
pinged and no `store_down` was said while no run could be recorded; only one
`heartbeat_failed` line. Another writer holding the lock is busy, not down.

A real SQLite file on a real tmpfs filled to the last byte (root mounts it; skipped
where that is not allowed), the daemon's heartbeat and loop-turn count."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupcron.config import Config
from jupcron.listen.metrics import Metrics
from jupcron.service.heartbeat import Heartbeat
from jupcron.service.notify import Notifier
from jupcron.service.status import Status
from jupcron.store.engine import make_engine, session_factory
from jupcron.store.handle import Store


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_makes_the_store_down_and_said_and_a_held_lock_does_not(
    small_disk: Path, sqlite_template: Path
) -> None:
    path = small_disk / "jupcron.db"
    shutil.copy2(sqlite_template, path)
    url = f"sqlite:///{path}"
    engine = make_engine(url, busy_ms=200)
    said: list[tuple[str, str]] = []
    config = Config.model_validate({"database": {"url": url}})
    status = Status(config=lambda: config, metrics=Metrics(), notifier=Notifier({}),
                    degraded=list, alert=lambda event, text: said.append((event, text)),
                    store_down_after=0)  # fmt: skip
    runtime: Any = SimpleNamespace(store=Store(engine, session_factory(engine)))
    status.runtime = runtime
    heart = Heartbeat(engine, node="h:1", started_at=datetime.now(UTC), version="t",
                      interval=0)  # fmt: skip
    status.heartbeat = heart
    try:
        status.beat(leader=True, role_since=datetime.now(UTC))
        status.update(leader=True)
        assert status.store_ok

        # another writer holds the lock: busy, not down
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        status.beat(leader=True, role_since=datetime.now(UTC))
        status.update(leader=True)
        other.rollback()
        other.close()
        assert heart.failing is None
        assert status.store_ok
        assert not said

        filler = _fill(small_disk)
        status.beat(leader=True, role_since=datetime.now(UTC))
        status.update(leader=True)
        assert heart.failing is not None
        assert "full" in heart.failing
        assert not status.store_ok  # the health check fails, the watchdog is not pinged
        assert [event for event, _ in said] == ["store_down"]

        filler.unlink()  # space again: the next beat is written, the store is up
        status.beat(leader=True, role_since=datetime.now(UTC))
        status.update(leader=True)
        assert heart.failing is None
        assert status.store_ok
    finally:
        status.close()
        engine.dispose()
