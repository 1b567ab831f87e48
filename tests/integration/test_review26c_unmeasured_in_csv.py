"""A swap that landed with no answer to measure it (settled `--landed` by the operator)
is said beside the figures in every form of `jupcron report` — the table, the JSON, the
page, and also the CSV a spreadsheet reads: its input left the wallet. The CSV had no
column for it: the plan's row read ``runs succeeded=2``, spent 5 USDC, fills 1, and the
totals' CSV spent 5 USDC, while 10 USDC had left the wallet.

SQLite, the emulator in process, the real runner and settle; the CLI in process."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner

from jupcron.cli.main import cli
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import ONE_ATTEMPT, USDC, Clock, Rig, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
PLAN = "settled"


def _landed_unmeasured(make_rig: RigFactory) -> tuple[Rig, int]:
    """One answered swap and one the operator settled as landed; what left the wallet."""
    clock = Clock(SLOT)
    rig = make_rig(clock=clock, api=ONE_ATTEMPT, emulator=Emulator(seed=11, clock=clock.wall))
    start = rig.emulator.ledger.balance(rig.wallet.address, USDC)
    plan = rig.plan("swap", name=PLAN)
    assert outcome_of(rig.runner().fire(plan, SLOT)).status is RunStatus.SUCCEEDED
    clock.advance(3600)
    run_id = rig.in_doubt_swap(plan, SLOT + timedelta(hours=1), clock)
    settle_in_doubt(SqlRunStore(rig.engine), run_id,
                    Verdict(landed=True, reason="found it", by="op"), now=clock())  # fmt: skip
    gave = start - rig.emulator.ledger.balance(rig.wallet.address, USDC)
    assert gave == 2 * 5_000_000
    return rig, gave


def _report(rig: Rig, tmp_path: Path, *args: str) -> str:
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"database": {"url": str(rig.engine.url)},
                                  "plans": {"dir": str(tmp_path / "no-plans")}}))  # fmt: skip
    result = CliRunner().invoke(cli, ["--config", str(config), "report", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_plans_csv_says_the_landed_unmeasured_swap(
    make_rig: RigFactory, tmp_path: Path
) -> None:
    rig, gave = _landed_unmeasured(make_rig)
    (row,) = csv.DictReader(io.StringIO(_report(rig, tmp_path, "--format", "csv")))
    assert row["runs"] == "succeeded=2"
    assert row["spent"] == "5000000"
    assert "unmeasured_spent" in row, f"the CSV's columns say nothing of it: {sorted(row)}"
    assert int(row["spent"]) + int(row["unmeasured_spent"]) == gave
    assert row["unmeasured_runs"] == "1"
    assert row["unmeasured_spent_ui"] == "5.000000"


def test_the_totals_csv_says_the_landed_unmeasured_swap(
    make_rig: RigFactory, tmp_path: Path
) -> None:
    rig, gave = _landed_unmeasured(make_rig)
    rows = list(csv.DictReader(io.StringIO(_report(rig, tmp_path, "--total", "--format", "csv"))))
    (usdc,) = [r for r in rows if r["mint"] == USDC]
    assert "unmeasured_spent" in usdc, f"the CSV's columns say nothing of it: {sorted(usdc)}"
    assert int(usdc["spent"]) + int(usdc["unmeasured_spent"]) == gave
    assert usdc["unmeasured_spent_ui"] == "5.000000"
