"""`jupcron pause` and `resume` need only the config's database section, so a config
with a problem elsewhere does not block the emergency stop. But a config file another
user may change is no config at all (the daemon refuses it at start, and keeps the
config it had at a reload): its database section may name any database, so the
pause went there (with only a warning) while the daemon went on ordering. Such a
file is refused by pause as by every other command, with the fix."""

from __future__ import annotations

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


def test_a_config_others_may_change_is_refused_by_pause(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    env.config.chmod(0o666)
    done = env.jupcron("pause", "--all", "--reason", "incident")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "too open" in done.stderr, done.stderr
    assert "chmod go-w" in done.stderr, done.stderr
    assert _pauses(env.db_url) == 0
    # a problem elsewhere in a trusted file still leaves the emergency stop working
    env.config.chmod(0o644)
    env.write_config(runner={"workers": 0})
    done = env.jupcron("pause", "--all", "--reason", "incident")
    assert done.returncode == 0, done.stderr
    assert "warning: the config does not load" in done.stderr
    assert _pauses(env.db_url) == 1
