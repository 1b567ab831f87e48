"""The runway in the real daemon (a subprocess) against the emulator: a wallet short of
its plan's input mint is said once (``low_balance``) at a local HTTP receiver however
many reads follow; `jupcron status` and /metrics show the runway while it runs."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.fixtures.daemon import USDC, DaemonEnv, DaemonEnvFactory, swap_plan
from tests.fixtures.receivers import HttpReceiver, free_port, wait_for


def checked_at(env: DaemonEnv) -> object:
    engine = make_engine(env.db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT max(checked_at) FROM runways")).scalar()
    finally:
        engine.dispose()


def test_an_empty_wallet_is_said_once_and_shown(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    env = daemon_env()
    port = free_port()
    env.write_config(notify={"urls": [http_receiver.url], "batch": 0, "min_interval": 0},
                     runway={"refresh": 1, "alert_below": 3},
                     metrics={"listen": f"127.0.0.1:{port}"})  # fmt: skip
    env.write_plans(swap_plan("daily", {"cron": "0 9 * * *"}, amount=5_000_000))
    env.apply()
    wallet = str(env.wallet.address)
    env.emulator.ledger.set_balance(wallet, USDC, 1_000_000)  # 1 USDC: not one run's worth
    proc = env.start()

    def lows() -> list[str]:
        return [b["message"] for b in http_receiver.bodies if "[low_balance]" in b["message"]]

    assert wait_for(lows, timeout=60), env.log_of(proc)
    seen: set[object] = set()

    def reads() -> int:
        seen.add(checked_at(env))
        return len(seen)

    # three more reads of the balance after the alert: still one message
    assert wait_for(lambda: reads() >= 4, timeout=60), env.log_of(proc)
    status = env.jupcron("status", "--format", "json")
    assert status.returncode == 0, status.stderr
    (runway,) = json.loads(status.stdout)["runway"]
    assert (runway["wallet"], runway["mint"], runway["balance"]) == (wallet, USDC, "1000000")
    assert (runway["runs"], runway["low"]) == (0, True)
    body = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    assert f'jupcron_runway_low{{mint="{USDC}",symbol="USDC",wallet="{wallet}"}} 1.0' in body
    assert f'jupcron_wallet_balance{{mint="{USDC}",symbol="USDC",wallet="{wallet}"}} 1.0' in body
    assert env.stop(proc) == 0
    (message,) = lows()
    assert f"wallet {wallet}: 1 USDC covers 0 of the next" in message
    assert "(plans: daily)" in message
