"""Swap V2 through the real `jupcron` (a subprocess) against the emulator, on SQLite
and PostgreSQL: the daemon SIGKILLed right after signing and restarted (the same
bytes go to /swap/v2/execute with the order's lastValidBlockHeight), and the
same crash left until the chain is past that height (the bytes are never posted,
a fresh order lands); `jupcron audit` and `jupcron report` show the V2 runs;
`plans validate` suggests Swap V2 to a plan pinned to Ultra v1 without refusing it."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from jupcron.emulator import Emulator
from jupcron.emulator.common import VALID_BLOCKS
from jupcron.store.engine import make_engine
from tests.e2e.cli import jupcron
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, at, swap_plan
from tests.fixtures.plans import write_plans


@pytest.fixture
def v2_env(daemon_env: DaemonEnvFactory, db_url: str) -> DaemonEnv:
    """A daemon whose config chooses Swap V2 (the fixture pins Ultra v1 for the
    older tests), with the emulator's RPC as rpc.url, and one swap due in 2 s."""
    env = daemon_env(db_url=db_url, emulator=Emulator(seed=12))
    env.write_config(api={"swap_api": "swap-v2"}, rpc={"url": env.server.url + "/rpc"})
    written = at(0)
    env.write_plans(swap_plan("v2-once", {"at": at(2), "grace": 120}))
    env.apply(now=written)
    return env


def _api_calls(env: DaemonEnv) -> dict[str, int]:
    """What the emulator served of the API for the run (its Solana RPC, the portfolio
    read each daemon start makes to prove its key, and the follower's token facts and
    prices aside: reads on spare capacity, no order)."""
    skip = ("rpc", "positions", "token_facts")
    return {k: v for k, v in env.emulator.ledger.requests.items() if k not in skip}


def _crash_after_signing(env: DaemonEnv) -> dict[str, Any]:
    crashed = env.start({"JUPCRON_FAILPOINTS": "after_sign"})
    assert crashed.wait(30) == -signal.SIGKILL, env.log_of(crashed)
    (row,) = env.rows()
    assert row["status"] == "signed"
    assert _api_calls(env) == {"swap_order": 1}  # nothing posted yet
    return row


def _finish(env: DaemonEnv) -> dict[str, Any]:
    restarted = env.start()
    done = env.wait_until(lambda: env.rows()[0]["status"] not in ("signed", "submitted",
                                                                  "pending", "requested"))  # fmt: skip
    assert done, env.log_of(restarted)
    assert env.stop(restarted) == 0
    (row,) = env.rows()
    return row


def test_a_crash_after_signing_reposts_the_same_bytes_to_swap_v2(v2_env: DaemonEnv) -> None:
    env = v2_env
    signed = _crash_after_signing(env)
    row = _finish(env)
    assert row["status"] == "succeeded"
    (landed,) = env.emulator.ledger.landed()
    assert row["signature"] == signed["signature"] == landed.signature
    assert row["request_id"] == landed.request_id
    assert _api_calls(env) == {"swap_order": 1, "execute_swap": 1}
    # the audit and the report see the V2 run like any swap
    audit = env.jupcron("audit", "--format", "json")
    assert audit.returncode == 0, audit.stderr
    (entry,) = json.loads(audit.stdout)
    assert (entry["kind"], entry["status"], entry["signature"]) == ("swap", "succeeded",
                                                                    landed.signature)  # fmt: skip
    assert entry["spent"] == "1000000"
    report = env.jupcron("report", "--format", "json")
    assert report.returncode == 0, report.stderr
    (plan,) = json.loads(report.stdout)
    assert (plan["plan_name"], plan["spent"], plan["fills"]) == ("v2-once", "1000000", 1)
    assert plan["received"] == landed.answer["totalOutputAmount"]


def test_a_crash_after_signing_past_the_orders_height_is_never_posted(
    v2_env: DaemonEnv,
) -> None:
    env = v2_env
    signed = _crash_after_signing(env)
    answer = env.emulator.handle("POST", "/_emulator/blocks", {}, {},
                                 json.dumps({"advance": VALID_BLOCKS + 1}).encode())  # fmt: skip
    assert answer.status == 200
    row = _finish(env)
    assert row["status"] == "succeeded"  # a fresh order, inside the slot's grace
    (landed,) = env.emulator.ledger.landed()
    assert landed.signature == row["signature"] != signed["signature"]
    assert env.emulator.ledger.execution(signed["signature"]) is None  # the old bytes: never sent
    assert len(env.emulator.ledger.issued) == 2
    assert env.emulator.ledger.requests["execute_swap"] == 1
    steps = _steps(env, row["run_id"])  # the events say why
    height = next(d for s, d in steps if s == "block_height")
    assert height["height"] > height["last_valid_block_height"]
    (reorder,) = [d for s, d in steps if s == "reorder"]
    assert "is past the order's lastValidBlockHeight" in reorder["expired"]


def _steps(env: DaemonEnv, run_id: int) -> list[tuple[str, dict[str, Any]]]:
    engine = make_engine(env.db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT step, detail FROM run_events WHERE run_id = :r "
                                     "ORDER BY id"), {"r": run_id})  # fmt: skip
            return [(r.step, r.detail if isinstance(r.detail, dict) else json.loads(r.detail))
                    for r in rows]  # fmt: skip
    finally:
        engine.dispose()


def test_plans_validate_suggests_swap_v2_for_a_plan_pinned_to_ultra_v1(tmp_path: Path) -> None:
    pinned = swap_plan("old", {"every": "1h"})
    pinned["swap_api"] = "ultra-v1"
    path = write_plans(tmp_path / "p.yaml", pinned)
    before = path.read_text()
    done = jupcron("plans", "validate", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok: 1 plan in 1 file"
    (warning,) = done.stderr.strip().splitlines()
    assert warning.startswith(f"{path}:")
    assert "warning: swap_api: ultra-v1 is no longer actively maintained" in warning
    assert "docs/products.md" in warning
    assert path.read_text() == before


def test_plans_validate_refuses_an_unknown_swap_api_in_one_line(tmp_path: Path) -> None:
    bad = swap_plan("bad", {"every": "1h"})
    bad["swap_api"] = "v2"
    done = jupcron("plans", "validate", str(write_plans(tmp_path / "p.yaml", bad)))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.endswith("swap_api: Input should be 'swap-v2' or 'ultra-v1'")


def test_the_daemon_says_which_swap_api_it_uses_and_warns_of_ultra_v1(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()  # the fixture's config pins Ultra v1
    for swap_api, warned in (("ultra-v1", True), ("swap-v2", False)):
        env.write_config(api={"swap_api": swap_api})
        proc = env.start()
        assert env.wait_until(lambda p=proc: "daemon_started" in env.log_of(p)), env.log_of(proc)
        assert env.stop(proc) == 0
        lines = [json.loads(line) for line in env.log_of(proc).splitlines()
                 if line.startswith("{")]  # fmt: skip
        (started,) = [e for e in lines if e.get("event") == "daemon_started"]
        assert started["swap_api"] == swap_api
        assert any(e.get("event") == "swap_api_unmaintained" for e in lines) is warned
