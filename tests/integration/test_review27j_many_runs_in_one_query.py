"""`jupcron audit --limit 100000` (the limit it offers) and `jupcron report` on a store
with many runs: each listed every run id it had found as one bind parameter of one
``IN (…)`` (the audit's money columns of the runs shown; the report's references of
every swap fill), and PostgreSQL's protocol carries at most 65,535 parameters a
statement (SQLite at most 32,766 in its default build). Past that the command stopped
with a driver error: the audit trail and the report of a busy store (a swap a minute
for 46 days) could not be read at all. On PostgreSQL, with real runs copied in SQL."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import text

from jupcron.cli.main import cli
from tests.fixtures.follow import FollowRig, FollowRigFactory

COPIES = 66_000  # runs beyond the first: more than 65,535


def _copy_runs(f: FollowRig, run_id: int) -> None:
    """`COPIES` more succeeded swaps of the same plan, a minute apart, each with the
    execute answer of the first (a fill each)."""
    with f.engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO runs (plan_id, plan_version, scheduled_for, status, trigger,"
            " request_id, signature, input_mint, output_mint, in_amount, out_amount,"
            " attempts, created_at, updated_at, finished_at, wallet, owner)"
            " SELECT plan_id, plan_version, scheduled_for + g * interval '1 minute', status,"
            " trigger, request_id, signature || g, input_mint, output_mint, in_amount,"
            " out_amount, attempts, created_at, updated_at, finished_at, wallet, owner"
            " FROM runs CROSS JOIN generate_series(1, :n) AS g WHERE id = :run"
        ), {"n": COPIES, "run": run_id})  # fmt: skip
        conn.execute(text(
            "INSERT INTO execute_results (run_id, signature, operation, status, code,"
            " http_status, slot, order_account, total_input_amount, total_output_amount,"
            " input_amount_result, output_amount_result, answer, recorded_at)"
            " SELECT r.id, r.signature, e.operation, e.status, e.code, e.http_status, e.slot,"
            " e.order_account, e.total_input_amount, e.total_output_amount,"
            " e.input_amount_result, e.output_amount_result, e.answer, r.scheduled_for"
            " FROM runs r CROSS JOIN execute_results e"
            " WHERE e.run_id = :run AND r.id <> :run"
        ), {"run": run_id})  # fmt: skip
        conn.execute(text(
            "INSERT INTO run_events (run_id, at, step, detail)"
            " SELECT r.id, r.scheduled_for, v.step, v.detail FROM runs r"
            " CROSS JOIN run_events v WHERE v.run_id = :run AND v.step = 'ordered'"
            " AND r.id <> :run"
        ), {"run": run_id})  # fmt: skip


def _jupcron(f: FollowRig, tmp_path: Path, *args: str) -> str:
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"database": {"url": f.engine.url.render_as_string(False)},
                                  "plans": {"dir": str(tmp_path / "no-plans")}}))  # fmt: skip
    result = CliRunner().invoke(cli, ["--config", str(config), *args])
    assert result.exit_code == 0, result.output[-2000:]
    return result.output


def test_the_audit_and_the_report_read_more_runs_than_one_statement_binds(
    make_follow_rig: FollowRigFactory, pg_url: str, tmp_path: Path
) -> None:
    f = make_follow_rig(pg_url)
    first = f.fire(f.rig.plan("swap", name="busy"))
    _copy_runs(f, first)
    total = COPIES + 1

    listed = _jupcron(f, tmp_path, "audit", "--limit", "100000", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(listed)))
    assert len(rows) == total
    assert {row["fills"] for row in rows} == {"1"}
    assert len({row["spent"] for row in rows}) == 1

    (report,) = json.loads(_jupcron(f, tmp_path, "report", "--format", "json"))
    assert report["fills"] == total
    assert report["runs"] == {"succeeded": total}
