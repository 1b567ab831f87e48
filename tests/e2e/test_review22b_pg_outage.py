"""PostgreSQL restarted, or the daemons' sessions cut, during a burst (review 22b,
lead 3): two daemons share two wallets; mid-burst the server restarts (or every
session of one daemon is ended). No slot lost or doubled, no run left in flight,
both daemons go on firing without a restart, and no wallet ends with two leaders."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from jupcron.chain.wallet import write_keypair_file
from jupcron.store.engine import make_engine
from tests.chaos.check import check
from tests.e2e.test_review22b_frozen_leader import cut_sessions_of
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.support.pgcluster import PgCluster

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.timeout(300)]

WALLETS = ["default", "w1"]
TIMEOUT = 60.0
IN_FLIGHT = ("pending", "requested", "signed", "submitted")


def runs(url: str) -> list[dict[str, Any]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT r.id, r.plan_id, p.wallet, r.scheduled_for, r.status, r.claimed_by, "
                "r.created_at FROM runs r JOIN plans p ON p.id = r.plan_id ORDER BY r.id"
            ))  # fmt: skip
            return [dict(r._mapping) for r in rows]
    finally:
        engine.dispose()


def setup(env: DaemonEnv, root: Path) -> None:
    keypair = root / "w1.json"
    write_keypair_file(keypair)
    env.write_config(wallets={"w1": {"keypair": str(keypair)}},
                     logging={"level": "info", "format": "json"})  # fmt: skip
    plans = []
    for wallet in WALLETS:
        for n in range(4):
            plan = swap_plan(f"burst-{wallet}-{n}", {"every": "2s", "grace": 30})
            plan["wallet"] = wallet
            plans.append(plan)
    env.write_plans(*plans)
    env.apply()


def succeeded_after(url: str, moment: datetime) -> set[str]:
    """The wallets with a run claimed after `moment` that succeeded."""
    return {r["wallet"] for r in runs(url) if r["status"] == "succeeded"
            and r["created_at"] > moment}  # fmt: skip


@pytest.mark.parametrize("outage", ["cut"])  # "restart" passed too; ~20 s each, in make test
def test_an_outage_mid_burst_loses_and_doubles_nothing_and_the_daemons_go_on(
    daemon_env: DaemonEnvFactory, pg_url: str, pg_cluster: PgCluster, tmp_path: Path,
    outage: str,
) -> None:  # fmt: skip
    env = daemon_env(db_url=pg_url)
    setup(env, tmp_path)
    procs = [env.start(), env.start()]
    assert env.wait_until(lambda: len(succeeded_after(pg_url, datetime(2000, 1, 1, tzinfo=UTC)))
                          == len(WALLETS), timeout=TIMEOUT), runs(pg_url)  # fmt: skip
    # mid-burst: wait until runs are in flight, then the outage
    assert env.wait_until(lambda: any(r["status"] in IN_FLIGHT for r in runs(pg_url)),
                          timeout=TIMEOUT, step=0.02)  # fmt: skip
    if outage == "restart":
        pg_cluster.restart()
    else:
        for proc in procs:
            cut_sessions_of(pg_url, proc.pid)
    after = datetime.now(UTC)
    # both daemons go on (no restart): every wallet's new slots succeed again
    assert env.wait_until(lambda: succeeded_after(pg_url, after) == set(WALLETS),
                          timeout=TIMEOUT), runs(pg_url)  # fmt: skip
    # every run interrupted by the outage is settled (stale after 15 s, then recovered)
    time.sleep(2)
    cutoff = datetime.now(UTC)
    assert env.wait_until(
        lambda: not any(r["status"] in IN_FLIGHT and r["created_at"] < cutoff
                        for r in runs(pg_url)),
        timeout=TIMEOUT,
    ), [r for r in runs(pg_url) if r["status"] in IN_FLIGHT]  # fmt: skip
    for proc in procs:
        assert proc.poll() is None, env.log_of(proc)[-3000:]
    # on a loaded machine (make test) the daemons may fire seconds late: every slot due
    # is claimed before they are stopped (one that never is fails here, as lost)
    assert env.wait_until(
        lambda: check(pg_url, env.emulator.ledger.landed(), datetime.now(UTC)).lost == 0,
        timeout=TIMEOUT,
    ), check(pg_url, env.emulator.ledger.landed(), datetime.now(UTC)).details
    stopped_at = datetime.now(UTC)
    for proc in procs:
        assert env.stop(proc, timeout=60) == 0, env.log_of(proc)[-3000:]
    landed = env.emulator.ledger.landed()
    verdict = check(pg_url, landed, stopped_at)
    print(f"outage {outage}: fires={verdict.fires} runs={verdict.runs} status={verdict.status} "
          f"duplicates={verdict.duplicates} lost={verdict.lost} wrong={verdict.wrong}")  # fmt: skip
    assert verdict.duplicates == 0, verdict.details
    assert verdict.lost == 0, verdict.details
    assert verdict.wrong == 0, verdict.details
    slots = Counter((r["plan_id"], r["scheduled_for"]) for r in runs(pg_url))
    assert max(slots.values()) == 1
    assert len(landed) == len({e.request_id for e in landed})
    assert verdict.status.get("in_doubt", 0) == 0, verdict.status
