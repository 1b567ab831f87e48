"""A group commit whose connection or BEGIN fails with an error other than "busy"
(SQLite's "file is not a database" after the file was overwritten in place, a
``cp wrong.db jupcron.db`` under the daemon): before, the batch had not been taken
yet, so no write was finished: the leader's own write came back as ``None`` (a claim
read as "slot taken": the run silently never happened) and, still queued and marked
to lead, it wedged the group: every later write of the process waited for ever while
the watchdog kept pinging. Now every queued write gets the error, and the group
serves the next write as soon as the store is usable again.

Real SQLite file, the real run store and runner, the emulator over loopback."""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from jupcron.domain import RunStatus
from jupcron.errors import StoreError
from jupcron.store.engine import make_engine, sqlite_file
from jupcron.store.group import GroupCommit
from tests.fixtures.runner import RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def _overwrite(path: Path, content: bytes) -> None:
    """The file rewritten in place (same inode), its WAL and shared memory gone."""
    with path.open("r+b") as out:
        out.write(content)
        out.truncate()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_claim_on_a_file_that_is_no_database_fails_and_orders_nothing(
    make_rig: RigFactory, tmp_path: Path
) -> None:
    rig = make_rig(loopback=True)
    path = sqlite_file(rig.config.database.url)
    assert path is not None
    keep = tmp_path / "good.db"
    plan = rig.plan("swap")
    runner = rig.runner()
    assert outcome_of(runner.fire(plan, SLOT)).status is RunStatus.SUCCEEDED
    rig.engine.dispose()  # the pool opens a fresh connection (as after an invalidated one)
    shutil.copy2(path, keep)
    _overwrite(path, b"not a database, " * 512)

    with pytest.raises(StoreError, match="not a database"):
        runner.fire(plan, SLOT + timedelta(hours=1))  # was: None, "run_slot_taken"
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 1  # nothing ordered

    # the group is not wedged: once the file is a database again, the next slot runs
    _overwrite(path, keep.read_bytes())
    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(runner.fire(plan, SLOT + timedelta(hours=2))), daemon=True
    )
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the run store's writes hang for ever"
    assert outcome_of(done[0]).status is RunStatus.SUCCEEDED  # type: ignore[arg-type]


def test_every_write_queued_behind_a_failed_begin_is_told(tmp_path: Path) -> None:
    """Writers that queued while the leader's connection failed all get the error
    (none gets ``None`` as if its write were committed), and none is left waiting."""
    url = f"sqlite:///{tmp_path / 'g.db'}"
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    group = GroupCommit(engine)
    assert group.run(lambda conn: conn.execute(text("INSERT INTO t VALUES (1)")).rowcount) == 1
    engine.dispose()
    _overwrite(tmp_path / "g.db", b"garbage!" * 512)

    results: list[object] = []

    def write() -> None:
        try:
            results.append(group.run(lambda conn: conn.execute(text("INSERT INTO t VALUES (2)"))))
        except StoreError as exc:
            results.append(exc)

    workers = [threading.Thread(target=write, daemon=True) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)
    assert not any(worker.is_alive() for worker in workers), "a write waits for ever"
    assert len(results) == 4
    assert all(isinstance(result, StoreError) for result in results), results
    assert group.commits == 1
    engine.dispose()
