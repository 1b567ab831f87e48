"""On PostgreSQL a daemon leads only the wallets whose keys it loaded at start. A reload
that adds a wallet to the config (the daemon loads wallets only at start) must not
make this daemon take that wallet's lock: every run of it would be rejected here
("not configured"), while a daemon restarted with the key could not lead it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from jupcron.chain.wallet import write_keypair_file
from jupcron.store import control
from jupcron.store.engine import make_engine
from tests.e2e.test_shards import led_by
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TIMEOUT = 60.0


def beats_of(url: str) -> list[datetime]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return [n.last_beat for n in control.nodes(conn) if n.running(datetime.now(UTC))]
    finally:
        engine.dispose()


def test_a_wallet_added_by_a_reload_is_not_led_by_a_daemon_without_its_key(
    daemon_env: DaemonEnvFactory, pg_url: str, tmp_path: Path
) -> None:
    env = daemon_env(db_url=pg_url)
    env.write_config(logging={"level": "info", "format": "json"})
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    proc = env.start()
    try:
        assert env.wait_until(lambda: led_by(pg_url).get("default") != [], timeout=TIMEOUT), (
            env.log_of(proc)
        )
        keypair = tmp_path / "trading.json"
        write_keypair_file(keypair)
        env.write_config(
            wallets={"trading": {"keypair": str(keypair)}},
            logging={"level": "info", "format": "json"},
        )
        proc.send_signal(1)  # SIGHUP: the config is read again
        assert env.wait_until(lambda: "config_reloaded" in env.log_of(proc), timeout=TIMEOUT), (
            env.log_of(proc)
        )
        reloaded = datetime.now(UTC)
        # a heartbeat after the reload, and several turns of the leading loop
        assert env.wait_until(
            lambda: (
                any(beat > reloaded for beat in beats_of(pg_url))
                and (datetime.now(UTC) - reloaded).total_seconds() > 8
            ),
            timeout=TIMEOUT,
        )
        found = led_by(pg_url)
        assert found.get("trading", []) == [], found
        assert len(found["default"]) == 1, found
    finally:
        env.stop(proc)
