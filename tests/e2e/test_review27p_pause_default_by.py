"""`jupcron pause` without ``--by`` records the login name (``$SUDO_USER``, ``$USER``,
``$LOGNAME``), which had no length check while an explicit ``--by`` is held to the
column's 128: on PostgreSQL a long ``$USER`` failed the pause with the database's own
error (the plans stayed unpaused), on SQLite it was stored whole. The default is now
cut to the column, the same on both, and the pause is taken."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan
from tests.support import clifork


def _paused_by(url: str) -> list[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(text("SELECT paused_by FROM pauses")).scalars())
    finally:
        engine.dispose()


@pytest.mark.timeout(120)
def test_a_long_login_name_does_not_fail_the_pause(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    name = "u" * 300
    done = clifork.run(
        ["--config", str(env.config), "pause", "tick"],
        env=env._env({"SUDO_USER": name, "USER": name, "LOGNAME": name}),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert _paused_by(db_url) == ["u" * 128]
