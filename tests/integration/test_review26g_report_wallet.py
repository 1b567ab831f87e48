"""`jupcron report --plan P --wallet W` where plan P is in the store but has no rows of
wallet W (it names another wallet, and never ran with W): it says so, with the plan's
wallet, and exits as a plan that is not there does, without a traceback. It said
"no plan named 'P'", which sends the operator looking for a plan that exists.

A real run over loopback to the emulator on SQLite; the CLI in process."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner

from jupcron.cli.main import cli
from jupcron.domain import RunStatus
from tests.fixtures.runner import Rig, RigFactory, outcome_of
from tests.integration.test_report_wallet_of_each_run import SLOT, move
from tests.integration.test_wallets_runs import two_wallets


def _report(rig: Rig, tmp_path: Path, *args: str) -> tuple[int, str]:
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"database": {"url": str(rig.engine.url)},
                                  "plans": {"dir": str(tmp_path / "no-plans")}}))  # fmt: skip
    result = CliRunner().invoke(cli, ["--config", str(config), "report", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_a_plan_without_runs_of_the_wallet_is_not_said_to_be_missing(
    make_rig: RigFactory, tmp_path: Path
) -> None:
    rig = make_rig(loopback=True)
    _, _, wallets = two_wallets(rig)
    plan = rig.plan("swap", name="weekly")
    assert outcome_of(rig.runner(wallets=wallets).fire(plan, SLOT)).status is RunStatus.SUCCEEDED

    missing_code, missing = _report(rig, tmp_path, "--plan", "nosuch")
    assert missing_code != 0
    assert "no plan named 'nosuch'" in missing

    code, said = _report(rig, tmp_path, "--plan", "weekly", "--wallet", "savings")
    assert "no plan named" not in said, f"the plan is there: {said.strip()!r}"
    assert "plan 'weekly' has no runs with wallet 'savings'" in said
    assert "wallet 'default'" in said  # what the plan names now
    assert code == missing_code
    assert "Traceback" not in said

    # moved to savings (not run there yet): its report under savings is its row, no error
    move(rig, "weekly", "savings")
    code, shown = _report(rig, tmp_path, "--plan", "weekly", "--wallet", "savings",
                          "--format", "json")  # fmt: skip
    assert code == 0, shown
    ((row,),) = [json.loads(shown)]
    assert (row["plan_name"], row["wallet"], row["fills"]) == ("weekly", "savings", 0)
    # and under default, the runs it made there
    code, shown = _report(rig, tmp_path, "--plan", "weekly", "--wallet", "default",
                          "--format", "json")  # fmt: skip
    assert code == 0, shown
    ((row,),) = [json.loads(shown)]
    assert (row["wallet"], row["fills"]) == ("default", 1)
    # ...but none in a period after them: said so, not that the plan is missing
    later = (SLOT + timedelta(days=1)).isoformat()
    code, said = _report(rig, tmp_path, "--plan", "weekly", "--wallet", "default", "--since", later)
    assert code == missing_code
    assert "plan 'weekly' has no runs with wallet 'default' in that period" in said
    assert "wallet 'savings'" in said
    # a wallet the plan neither names nor ran with, after the move
    code, said = _report(rig, tmp_path, "--plan", "weekly", "--wallet", "cold")
    assert code == missing_code
    assert "no plan named" not in said
    assert "wallet 'savings'" in said
