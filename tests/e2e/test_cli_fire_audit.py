"""`jupcron fire NAME` and `jupcron audit` as subprocesses, against the emulator."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

from sqlalchemy import text

from jupcron.store.engine import make_engine
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


def test_audit_of_a_plan_that_does_not_exist_says_so(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    done = env.jupcron("audit", "--plan", "typo")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "error: no plan named 'typo' in the store (see 'jupcron plans list')\n"
    # a plan that exists but has no runs yet is not an error
    empty = env.jupcron("audit", "--plan", "a")
    assert empty.returncode == 0, empty.stderr
    assert "(none)" in empty.stdout


def test_audit_json_and_csv_carry_every_column_of_the_audit_view(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    assert env.jupcron("fire", "a").returncode == 0
    view = env.rows()[0]  # SELECT * FROM audit
    rows = json.loads(env.jupcron("audit", "--format", "json").stdout)
    # the view's columns, in its order, then the amounts in token units beside them
    units = ["input_symbol", "in_amount_ui", "output_symbol", "out_amount_ui"]
    assert list(rows[0]) == [*view, *units]
    assert rows[0]["plan_version"] == 1
    for column in ("created_at", "updated_at", "finished_at", "scheduled_for"):
        assert rows[0][column], column
    assert (rows[0]["in_amount"], rows[0]["input_symbol"], rows[0]["in_amount_ui"]) == (
        "1000000", "USDC", "1"
    )  # fmt: skip
    assert rows[0]["output_symbol"] == "SOL"
    assert Decimal(rows[0]["out_amount_ui"]) * 10**9 == int(rows[0]["out_amount"])
    header = env.jupcron("audit", "--format", "csv").stdout.splitlines()[0]
    assert header.split(",") == [*view, *units]
    table = env.jupcron("audit").stdout
    assert "1 USDC" in table  # a person reads tokens, not base units
    assert "1000000" not in table


def test_run_events_detail_is_json_objects(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    assert env.jupcron("fire", "a", "--dry-run").returncode == 0
    engine = make_engine(env.db_url)
    try:
        with engine.connect() as conn:
            events = conn.execute(text("SELECT step, detail FROM run_events ORDER BY id")).all()
    finally:
        engine.dispose()
    details = {step: json.loads(detail) if isinstance(detail, str) else detail
               for step, detail in events}  # fmt: skip
    programs = details["dry_run"]["programs"]
    assert {
        "id": "ComputeBudget111111111111111111111111111111",
        "name": "Compute Budget",
    } in programs
    assert all(set(p) == {"id", "name"} for p in programs), programs
    assert not any("('" in json.dumps(d) for d in details.values()), details  # no Python reprs
