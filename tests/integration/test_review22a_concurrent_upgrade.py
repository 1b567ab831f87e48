"""Two `jupcron db upgrade` at once on one PostgreSQL database (review 22a): the
second waits for the first and finds nothing left to do (exit 0, the head reached),
instead of running the same migrations in a transaction of its own and failing on
the first one's work (``column "owner" of relation "runs" already exists``, or from
an empty database a duplicate key in pg_type, or Alembic's version row not found).

Made deterministic with a reader of the runs table held open by the test: the first
upgrade then waits at 0013's ALTER TABLE runs, the second is started and seen waiting
too, and only then is the reader let go. Real processes, the PostgreSQL fixture."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import sqlalchemy as sa

from jupcron.store import migrate

WAIT = 60.0  # seconds: a deadline for what must happen, never an assertion on time


def _upgrade(config: Path) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "jupcron", "--config", str(config), "db", "upgrade"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _waiting_on_locks(engine: sa.Engine) -> int:
    """Sessions of this database (not ours) waiting for a lock."""
    with engine.connect() as conn:
        found = conn.execute(sa.text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'")).scalar_one()  # fmt: skip
    return int(found)


def _until(engine: sa.Engine, count: int, procs: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + WAIT
    while _waiting_on_locks(engine) < count:
        for proc in procs:
            assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the upgrades never waited on the lock"
        time.sleep(0.05)


def _revision(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        return str(conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar_one())


def test_a_second_upgrade_at_the_same_time_waits_and_succeeds(tmp_path: Path, pg_url: str) -> None:
    migrate.downgrade(pg_url, "0012_plan_files")
    config = tmp_path / "jupcron.yaml"
    config.write_text(f'database:\n  url: "{pg_url}"\n')
    watcher = sa.create_engine(pg_url)
    reader = sa.create_engine(pg_url)
    procs: list[subprocess.Popen[str]] = []
    try:
        with reader.connect() as held:
            held.execute(sa.text("LOCK TABLE runs IN ACCESS SHARE MODE"))
            procs.append(_upgrade(config))
            _until(watcher, 1, procs)  # the first waits at ALTER TABLE runs
            procs.append(_upgrade(config))
            _until(watcher, 2, procs)  # the second waits too, behind it
            held.rollback()
        outcomes = [p.communicate(timeout=WAIT) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outcomes
        for out, err in outcomes:
            assert f"is at revision {migrate.HEAD}" in out, (out, err)
        assert _revision(watcher) == migrate.HEAD
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        watcher.dispose()
        reader.dispose()
