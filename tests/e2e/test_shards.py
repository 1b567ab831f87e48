"""Three daemons on one PostgreSQL share three wallets (DESIGN §6, issue 31 item 2):
each wallet is led by exactly one daemon; SIGKILL one and another leads its
wallet; the runs of every wallet land exactly once."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from jupcron.chain.wallet import write_keypair_file
from jupcron.store import control
from jupcron.store.engine import make_engine
from tests.chaos.check import check
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan

pytestmark = [pytest.mark.slow, pytest.mark.timeout(360)]  # three daemons start: slow when loaded

WALLETS = ["default", "w1", "w2"]
TIMEOUT = 60.0  # generous: three daemons and the emulator share two cores


def led_by(url: str) -> dict[str, list[str]]:
    """wallet -> the running daemons whose heartbeat says they lead it."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            nodes = control.nodes(conn)
    finally:
        engine.dispose()
    now = datetime.now(UTC)
    found: dict[str, list[str]] = {w: [] for w in WALLETS}
    for node in nodes:
        if node.running(now):
            for wallet in node.wallets or ():
                found.setdefault(wallet, []).append(node.node)
    return found


def runs_by_wallet(url: str, *, with_created: bool = False) -> list[dict[str, Any]]:
    created = ", r.created_at" if with_created else ""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                f"SELECT r.id, p.wallet, r.scheduled_for, r.status, r.claimed_by{created} "  # noqa: S608
                "FROM runs r JOIN plans p ON p.id = r.plan_id ORDER BY r.id"
            ))  # fmt: skip
            return [dict(r._mapping) for r in rows]
    finally:
        engine.dispose()


def one_each(url: str) -> bool:
    found = led_by(url)
    return all(len(found[w]) == 1 for w in WALLETS)


def spread(url: str) -> list[int]:
    """How many wallets each leading daemon leads (when each wallet has one leader)."""
    found = led_by(url)
    if not all(len(found[w]) == 1 for w in WALLETS):
        return []
    return sorted(Counter(found[w][0] for w in WALLETS).values())


def pid_of(node: str) -> int:
    return int(node.rsplit(":", 1)[1])


def setup(env: DaemonEnv, root: Path) -> None:
    wallets = {}
    for name in WALLETS[1:]:
        keypair = root / f"{name}.json"
        write_keypair_file(keypair)
        wallets[name] = {"keypair": str(keypair)}
    env.write_config(wallets=wallets, logging={"level": "info", "format": "json"})
    plans = []
    for name in WALLETS:
        plan = swap_plan(f"tick-{name}", {"every": "2s", "grace": 30})
        plan["wallet"] = name
        plans.append(plan)
    env.write_plans(*plans)
    env.apply()


def test_three_daemons_share_three_wallets_and_take_over_a_killed_ones(
    daemon_env: DaemonEnvFactory, pg_url: str, tmp_path: Path
) -> None:
    env = daemon_env(db_url=pg_url)
    setup(env, tmp_path)
    procs = [env.start() for _ in range(3)]
    assert env.wait_until(lambda: one_each(pg_url), timeout=TIMEOUT), led_by(pg_url)
    # three daemons, three wallets: one each once the joiners got their share
    assert env.wait_until(lambda: spread(pg_url) == [1, 1, 1], timeout=TIMEOUT), led_by(pg_url)
    # `jupcron status` says which node leads which wallet
    shown = env.jupcron("status", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    daemons = json.loads(shown.stdout)["daemons"]
    said = sorted(w for d in daemons if d["running"] for w in d["wallets"] or [])
    assert said == sorted(WALLETS), daemons
    assert env.wait_until(
        lambda: (
            {r["wallet"] for r in runs_by_wallet(pg_url) if r["status"] != "skipped"}
            == set(WALLETS)
        ),
        timeout=TIMEOUT,
    ), runs_by_wallet(pg_url)

    found = led_by(pg_url)
    victim_wallet = WALLETS[1]
    victim_node = found[victim_wallet][0]
    victim = next(p for p in procs if p.pid == pid_of(victim_node))
    victim.kill()
    victim.wait(10)

    def taken_over() -> bool:
        now = led_by(pg_url)[victim_wallet]
        return len(now) >= 1 and victim_node not in now

    assert env.wait_until(taken_over, timeout=TIMEOUT), led_by(pg_url)
    heir = led_by(pg_url)[victim_wallet][0]
    # the heir runs the wallet's slots from now on
    assert env.wait_until(
        lambda: any(
            r["wallet"] == victim_wallet and (r["claimed_by"] or "") == heir
            for r in runs_by_wallet(pg_url)
        ),
        timeout=TIMEOUT,
    ), runs_by_wallet(pg_url)
    # every wallet led by exactly one of the two left (the dead one's row goes stale)
    assert env.wait_until(lambda: one_each(pg_url), timeout=TIMEOUT), led_by(pg_url)
    # a run the victim left in flight is carried on by the heir once it is stale (15 s
    # untouched: it cannot tell a dead driver from a slow one sooner)
    in_flight = {"pending", "requested", "signed", "submitted"}
    assert env.wait_until(
        lambda: (
            not any(
                r["wallet"] == victim_wallet
                and r["status"] in in_flight
                and (r["claimed_by"] or "") == victim_node
                for r in runs_by_wallet(pg_url)
            )
        ),
        timeout=TIMEOUT,
    ), runs_by_wallet(pg_url)

    stopped_at = datetime.now(UTC)
    for proc in procs:
        if proc is not victim:
            assert env.stop(proc, timeout=60) == 0, env.log_of(proc)[-2000:]
    landed = env.emulator.ledger.landed()
    verdict = check(pg_url, landed, stopped_at)
    print(
        f"shards e2e: fires={verdict.fires} runs={verdict.runs} "
        f"duplicates={verdict.duplicates} lost={verdict.lost} wrong={verdict.wrong}"
    )
    assert verdict.duplicates == 0, verdict.details
    assert verdict.lost == 0, verdict.details
    assert verdict.wrong == 0, verdict.details
    rows = runs_by_wallet(pg_url)
    slots = Counter((r["wallet"], r["scheduled_for"]) for r in rows)
    assert max(slots.values()) == 1
    assert {r["wallet"] for r in rows if r["status"] == "succeeded"} == set(WALLETS)
    # each landed order is one run's: no request landed twice
    assert len(landed) == len({e.request_id for e in landed})
