"""`jupcron pause` says which daemons it reaches. A pause is stored in the database the
config names; written to another one than the daemon's (a second config file, or a
config that did not load, whose database section alone the command used) it stops
nothing while the operator believes it did. So the command names the daemons whose
heartbeat in that database is fresh, and says aloud when there is none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jupcron.store import control
from jupcron.store.engine import begin, make_engine
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan


def _beat(url: str, node: str, at: datetime) -> None:
    engine = make_engine(url)
    try:
        with begin(engine) as conn:
            control.beat(conn, control.NodeBeat(
                node=node, role="leader", role_since=at, started_at=at, last_beat=at,
                dry_run=False, kill_switch=None, version="test",
            ))  # fmt: skip
    finally:
        engine.dispose()


def test_a_pause_with_no_daemon_on_its_database_says_so(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    _beat(env.db_url, "elsewhere:41", datetime.now(UTC) - timedelta(minutes=5))  # long gone
    done = env.jupcron("pause", "tick")
    assert done.returncode == 0, done.stderr
    assert "paused tick" in done.stdout
    assert "no daemon is running on this database (sqlite:///" in done.stdout, done.stdout
    assert "skip these slots from within a second" not in done.stdout


def test_a_pause_names_the_daemons_whose_heartbeat_is_fresh(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    _beat(env.db_url, "host-a:7", datetime.now(UTC))
    _beat(env.db_url, "host-b:9", datetime.now(UTC) - timedelta(minutes=5))  # stale
    done = env.jupcron("pause", "--all")
    assert done.returncode == 0, done.stderr
    assert "1 daemon(s) running on this database (host-a:7) skip these slots" in done.stdout
    assert "host-b" not in done.stdout
