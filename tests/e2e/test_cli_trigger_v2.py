"""Trigger V2 plans through the `jupcron` command (subprocesses): apply, fire each
kind, audit and report (SQLite and PostgreSQL); the daemon SIGKILLed after
signing a deposit, then restarted; a hostile challenge refused by `fire`."""

from __future__ import annotations

import json
import signal
from typing import Any

from tests.fixtures.daemon import DaemonEnvFactory, at
from tests.fixtures.runner import SOL, USDC
from tests.fixtures.trigger_v2 import DCA_REQUEST, ORDER_REQUEST


def _plan(name: str, kind: str, request: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "kind": kind, "schedule": {"every": "1d"}, "request": request}


def test_each_v2_kind_fires_and_shows_in_the_audit_and_the_report(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)
    env.write_plans(_plan("v2-dca", "trigger-v2-dca", DCA_REQUEST),
                    _plan("v2-order", "trigger-v2-order", {**ORDER_REQUEST, "triggerPriceUsd": 200}))  # fmt: skip
    env.apply()
    for name in ("v2-dca", "v2-order"):
        done = env.jupcron("fire", name)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "succeeded" in done.stdout
    orders = {o.family: o for o in env.emulator.state.v2.orders.values()}
    assert set(orders) == {"dca", "price"}
    env.write_plans(_plan("v2-dca", "trigger-v2-dca", DCA_REQUEST),
                    _plan("v2-order", "trigger-v2-order", {**ORDER_REQUEST, "triggerPriceUsd": 200}),
                    _plan("v2-stop", "trigger-v2-cancel", {"order": orders["dca"].id, "family": "dca"}))  # fmt: skip
    env.apply()
    done = env.jupcron("fire", "v2-stop")
    assert done.returncode == 0, done.stdout + done.stderr
    assert orders["dca"].state == "cancelled"
    rows = {r["plan_name"]: r for r in json.loads(env.jupcron("audit", "--format", "json").stdout)}
    assert {n: (r["kind"], r["status"]) for n, r in rows.items()} == {
        "v2-dca": ("trigger-v2-dca", "succeeded"),
        "v2-order": ("trigger-v2-order", "succeeded"),
        "v2-stop": ("trigger-v2-cancel", "succeeded"),
    }
    assert rows["v2-dca"]["order_account"] == orders["dca"].id
    assert (rows["v2-dca"]["input_mint"], rows["v2-dca"]["in_amount"]) == (USDC, "40000000")
    assert rows["v2-order"]["output_mint"] == USDC
    assert rows["v2-order"]["input_mint"] == SOL
    report = json.loads(env.jupcron("report", "--format", "json").stdout)
    assert {r["plan_name"]: r["runs"] for r in report} == {
        "v2-dca": {"succeeded": 1}, "v2-order": {"succeeded": 1}, "v2-stop": {"succeeded": 1},
    }  # fmt: skip
    tokens = list(env.emulator.state.v2.tokens)
    assert len(tokens) == 3  # each `jupcron fire` logs in once
    dumped = repr(env.rows()) + done.stdout + done.stderr
    assert all(t not in dumped for t in tokens)


def test_a_daemon_killed_after_signing_a_deposit_posts_it_once_after_restart(
    daemon_env: DaemonEnvFactory,
) -> None:
    """The real daemon SIGKILLs itself right after storing the signed deposit; the
    restarted one posts the same bytes: one order, its deposit our signature."""
    env = daemon_env()
    written = at(0)
    env.write_plans({**_plan("v2-dca", "trigger-v2-dca", DCA_REQUEST),
                     "schedule": {"at": at(2), "grace": 120}})  # fmt: skip
    env.apply(now=written)
    crashed = env.start({"JUPCRON_FAILPOINTS": "after_sign"})
    assert crashed.wait(30) == -signal.SIGKILL, env.log_of(crashed)
    (row,) = env.rows()
    assert row["status"] == "signed"
    assert env.emulator.state.v2.orders == {}  # nothing posted yet
    restarted = env.start()
    assert env.wait_until(lambda: env.rows()[0]["status"] == "succeeded", timeout=30), env.log_of(
        restarted
    )
    assert env.stop(restarted) == 0
    (after,) = env.rows()
    assert after["signature"] == row["signature"]
    (order,) = env.emulator.state.v2.orders.values()
    assert order.deposit_signature == row["signature"]
    assert [e.signature for e in env.emulator.ledger.landed()] == [row["signature"]]


def test_a_hostile_challenge_is_refused_by_fire(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.emulator.faults.add("hostile", operation="trigger_v2_challenge", variant="disguised")
    env.write_plans(_plan("v2-dca", "trigger-v2-dca", DCA_REQUEST))
    env.apply()
    done = env.jupcron("fire", "v2-dca")
    assert done.returncode == 1
    assert "rejected" in done.stdout
    assert "txguard refused" in done.stdout
    assert env.emulator.ledger.requests.get("trigger_v2_verify", 0) == 0
