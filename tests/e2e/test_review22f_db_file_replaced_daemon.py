"""`jupcron run` whose SQLite file is restored from a backup under it (``mv backup.db
jupcron.db``) while it runs a plan every few seconds: its open connections would go
on writing into the old file, no longer the database, and it would go on ordering
and signing runs the restored file never hears of. It stops instead (exit 78, the
reason said), and posts nothing more. Real daemon process, real SQLite file, the
emulator over loopback."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from tests.fixtures.daemon import DaemonEnvFactory, at, swap_plan


def test_a_database_file_restored_under_the_daemon_stops_it(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    path = Path(env.db_url.removeprefix("sqlite:///"))
    backup = env.root / "backup.db"
    source, copy = sqlite3.connect(path), sqlite3.connect(backup)
    with copy:
        source.backup(copy)  # taken before the daemon starts: it holds none of its runs
    source.close()
    copy.close()
    env.write_plans(swap_plan("often", {"every": "3s"}))
    env.apply(now=at(-1))
    proc = env.start()
    assert env.wait_until(lambda: len(env.rows("status = 'succeeded'")) >= 1, timeout=30), (
        env.log_of(proc)
    )

    restored = path.with_name("restored.db")
    shutil.copy2(backup, restored)
    os.replace(restored, path)
    posted = env.emulator.ledger.requests.get("execute_ultra", 0)

    code = proc.wait(30)  # its next heartbeat (every 2 s), or its next run, finds it
    log = env.log_of(proc)
    assert code == 78, log  # EXIT_FATAL: a human puts the right file back
    assert "replaced or deleted" in log, log
    # at most a post already under way when the file was swapped; no run after it
    assert env.emulator.ledger.requests.get("execute_ultra", 0) <= posted + 1


def test_an_idle_daemon_whose_file_is_deleted_stops_at_its_next_heartbeat(
    daemon_env: DaemonEnvFactory,
) -> None:
    """No slot due for an hour, no recovery pass for as long: the heartbeat (every
    2 s) finds the file gone, not the next run an hour later (until then the daemon
    ran on, saying only that the store was unavailable)."""
    env = daemon_env()
    env.write_config(runner={"recovery_interval": 3600})
    path = Path(env.db_url.removeprefix("sqlite:///"))
    env.write_plans(swap_plan("hourly", {"every": "1h"}))
    env.apply()
    proc = env.start()
    started = env.wait_until(lambda: "daemon_started" in env.log_of(proc), timeout=30)
    assert started, env.log_of(proc)
    assert env.wait_until(lambda: len(env.status()["daemons"]) == 1, timeout=30)
    for suffix in ("", "-wal", "-shm"):  # `rm jupcron.db*`
        Path(f"{path}{suffix}").unlink(missing_ok=True)

    code = proc.wait(30)
    log = env.log_of(proc)
    assert code == 78, log
    assert "replaced or deleted" in log, log
    assert env.emulator.ledger.requests.get("execute_ultra", 0) == 0
