"""Takeover time with leadership per wallet (DESIGN §6, issue 31 item 2): three
daemons on one PostgreSQL lead three wallets; the leader of one is SIGKILLed
(three times, a different wallet each time, the victim started again between);
printed: the seconds from the kill until another daemon's heartbeat says it leads
the wallet, and until that wallet's next run is claimed by another daemon.
Figures only: nothing here fails on timing."""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from statistics import median

import pytest

from tests.bench.conftest import Figures
from tests.chaos.check import check
from tests.e2e.test_shards import WALLETS, led_by, one_each, pid_of, runs_by_wallet, setup
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory

pytestmark = pytest.mark.timeout(600)

KILLS = 3
WAIT = 120.0


def kill_and_time(
    env: DaemonEnv, url: str, wallet: str, procs: list[subprocess.Popen[str]]
) -> tuple[float, float | None]:
    """SIGKILL the leader of ``wallet``, start it again after; (seconds until another
    daemon leads the wallet, seconds until the wallet's next run by another)."""
    node = led_by(url)[wallet][0]
    victim = next(p for p in procs if p.pid == pid_of(node))
    killed_at, wall = time.monotonic(), datetime.now(UTC)
    victim.kill()
    victim.wait(10)
    env.wait_until(lambda: any(n != node for n in led_by(url)[wallet]), WAIT, 0.05)
    led_again = time.monotonic() - killed_at

    def by_another() -> list[datetime]:
        return [r["created_at"] for r in runs_by_wallet(url, with_created=True)
                if r["wallet"] == wallet and r["claimed_by"] not in (None, node)
                and r["created_at"] > wall]  # fmt: skip

    env.wait_until(lambda: bool(by_another()), WAIT, 0.1)
    first = min(by_another(), default=None)
    procs[procs.index(victim)] = env.start()
    return led_again, None if first is None else (first - wall).total_seconds()


def test_takeover_time(
    daemon_env: DaemonEnvFactory, pg_empty_url: str, tmp_path: Path, figures: Figures
) -> None:
    env = daemon_env(db_url=pg_empty_url)
    setup(env, tmp_path)
    procs = [env.start() for _ in range(3)]
    led_again: list[float] = []
    next_run: list[float] = []
    for kill in range(KILLS):
        if not env.wait_until(lambda: one_each(pg_empty_url), timeout=WAIT):
            print(f"takeover bench: wallets not settled: {led_by(pg_empty_url)}")
            break
        led_s, run_s = kill_and_time(env, pg_empty_url, WALLETS[kill % len(WALLETS)], procs)
        led_again.append(led_s)
        if run_s is not None:
            next_run.append(run_s)
    stopped_at = datetime.now(UTC)
    for proc in procs:
        env.stop(proc, timeout=60)
    verdict = check(pg_empty_url, env.emulator.ledger.landed(), stopped_at)
    print(f"takeover: led again {[round(s, 2) for s in led_again]} s, "
          f"next run by another {[round(s, 2) for s in next_run]} s, "
          f"duplicates={verdict.duplicates} lost={verdict.lost}")  # fmt: skip
    if led_again:
        figures.put("postgresql", "takeover_led_max_s", max(led_again))
        figures.put("postgresql", "takeover_led_p50_s", median(led_again))
    if next_run:
        figures.put("postgresql", "takeover_run_max_s", max(next_run))
    figures.put("postgresql", "takeover_duplicates", verdict.duplicates)
