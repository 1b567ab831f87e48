"""`jupcron config check` promises exit 0 only when the config is good; a
``metrics.listen`` the daemon cannot use (no port) passed it, and `jupcron run` then
refused to start on it ("metrics.listen 'localhost9464': expected HOST:PORT"), after
the probes, the store and the leader lock. ``web.listen`` is checked there already
(daemon/cli/configcheck.py `web_check`); ``metrics.listen`` was not; it is now a check of its own
(`probe.metrics_check`)."""

from __future__ import annotations

from tests.fixtures.daemon import DaemonEnvFactory


def test_a_metrics_listen_the_daemon_cannot_use_fails_the_check(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_config(metrics={"listen": "localhost9464"})
    done = env.jupcron("config", "check")
    assert done.returncode == 1, done.stdout
    assert "metrics.listen" in done.stdout + done.stderr
