"""Free text an operator types that lands in a VARCHAR(n) column is checked before any
write, with one clear line and the same answer on every backend: SQLite keeps a string
of any length in a VARCHAR(128), PostgreSQL refuses it (the command failed with the
database's raw error there, and succeeded here)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan


def _pauses(url: str) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT COUNT(*) FROM pauses")).scalar_one())
    finally:
        engine.dispose()


@pytest.mark.timeout(120)
def test_a_pause_by_too_long_a_name_is_refused_on_every_backend(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    done = env.jupcron("pause", "tick", "--by", "x" * 129)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "--by" in done.stderr, done.stderr
    assert "at most 128" in done.stderr, done.stderr
    assert "database refused" not in done.stderr, done.stderr
    assert _pauses(db_url) == 0
    # the longest the column holds is fine
    done = env.jupcron("pause", "tick", "--by", "y" * 128)
    assert done.returncode == 0, done.stderr
