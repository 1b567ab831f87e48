"""`jupcron fire NAME` and `jupcron audit` as subprocesses, against the emulator."""

from __future__ import annotations

import csv
import io
import json

from tests.fixtures.daemon import DaemonEnvFactory, swap_plan


def test_fire_runs_a_plan_now_and_audit_shows_it(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    done = env.jupcron("fire", "manual")
    assert done.returncode == 0, done.stderr
    assert "succeeded" in done.stdout
    landed = env.emulator.ledger.landed()
    assert len(landed) == 1
    assert f"requestId={landed[0].request_id}" in done.stdout
    assert f"signature={landed[0].signature}" in done.stdout

    table = env.jupcron("audit")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:5] == [
        "run_id", "plan_name", "kind", "scheduled_for", "status",
    ]  # fmt: skip
    assert "manual" in table.stdout
    rows = json.loads(env.jupcron("audit", "--format", "json").stdout)
    assert rows[0]["request_id"] == landed[0].request_id
    assert rows[0]["signature"] == landed[0].signature
    assert rows[0]["trigger"] == "manual"
    assert rows[0]["in_amount"] == "1000000"
    parsed = list(csv.DictReader(io.StringIO(env.jupcron("audit", "--format", "csv").stdout)))
    assert parsed[0]["status"] == "succeeded"


def test_fire_dry_run_signs_nothing_and_exits_zero(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    done = env.jupcron("fire", "manual", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "dry_run" in done.stdout
    assert env.emulator.ledger.landed() == []
    assert env.rows()[0]["signature"] is None


def test_fire_exits_one_when_the_run_is_refused(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.emulator.faults.add("hostile", operation="ultra_order")
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    done = env.jupcron("fire", "manual")
    assert done.returncode == 1
    assert "rejected" in done.stdout
    assert "txguard refused" in done.stdout
    assert env.emulator.ledger.landed() == []


def test_fire_of_an_unknown_plan_is_one_line(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    done = env.jupcron("fire", "nope")
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        == "error: no plan named 'nope' in the store (run 'jupcron plans apply')"
    )


def test_audit_filters(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}), swap_plan("b", {"every": "1d"}))
    env.apply()
    assert env.jupcron("fire", "a").returncode == 0
    assert env.jupcron("fire", "b", "--dry-run").returncode == 0
    only_a = json.loads(env.jupcron("audit", "--plan", "a", "--format", "json").stdout)
    assert [r["plan_name"] for r in only_a] == ["a"]
    dry = json.loads(env.jupcron("audit", "--status", "dry_run", "--format", "json").stdout)
    assert [r["plan_name"] for r in dry] == ["b"]
    none = json.loads(env.jupcron("audit", "--since", "2099-01-01", "--format", "json").stdout)
    assert none == []
    bad = env.jupcron("audit", "--since", "yesterday")
    assert bad.returncode == 2
    assert "is not an ISO 8601 date" in bad.stderr
    limited = json.loads(env.jupcron("audit", "--limit", "1", "--format", "json").stdout)
    assert len(limited) == 1
