"""`jupcron audit --wallet NAME` and `report --wallet NAME` with a name that no run,
no plan and no configured wallet has (a typo: ``savigns``) answered with an empty
result and exit 0, read as "no runs", while ``--plan`` with an unknown name is an
error. It is now one too, naming the wallets that do have runs; a configured wallet
with no runs yet, or a wallet gone from the config whose runs are stored, still
answers (empty, or its runs)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.e2e.cli import jupcron
from tests.e2e.test_cli_wallets import config_with_wallets
from tests.fixtures.plans import PlanFiles, swap_plan


def _applied_with_runs(tmp_path: Path, sqlite_url: str, plan_files: PlanFiles) -> Path:
    from jupcron.store import plans as store_plans
    from jupcron.store.engine import make_engine, session_factory, transaction
    from tests.fixtures.runs import skip_run

    folder = plan_files({"a.yaml": [swap_plan("alpha"), swap_plan("beta", wallet="savings")]})
    config = config_with_wallets(
        tmp_path, sqlite_url, folder, wallet={"keypair": "main.json"}
    )  # fmt: skip
    assert jupcron("--config", str(config), "plans", "apply").returncode == 0
    slot = datetime(2025, 1, 1, tzinfo=UTC)
    engine = make_engine(sqlite_url)
    try:
        with transaction(session_factory(engine)) as s:
            plans = store_plans.all_plans(s)
        for plan in plans:
            assert skip_run(engine, plan, slot, now=slot, error="missed")
    finally:
        engine.dispose()
    return config


@pytest.mark.parametrize("command", ["audit", "report"])
def test_a_wallet_nothing_has_is_an_error(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles, command: str
) -> None:
    config = _applied_with_runs(tmp_path, sqlite_url, plan_files)
    done = jupcron("--config", str(config), command, "--wallet", "savigns", "--format", "json")
    assert done.returncode == 1, done.stdout
    assert "no wallet named 'savigns'" in done.stderr, done.stderr
    assert "default, savings" in done.stderr, done.stderr  # the wallets with runs


@pytest.mark.parametrize("command", ["audit", "report"])
def test_a_configured_wallet_without_runs_is_an_empty_answer(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles, command: str
) -> None:
    config = _applied_with_runs(tmp_path, sqlite_url, plan_files)
    text = json.loads(config.read_text())
    text["wallets"]["spare"] = {"keypair": "spare.json"}
    config.write_text(json.dumps(text))
    done = jupcron("--config", str(config), command, "--wallet", "spare", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize("command", ["audit", "report"])
def test_a_wallet_gone_from_the_config_still_shows_its_runs(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles, command: str
) -> None:
    config = _applied_with_runs(tmp_path, sqlite_url, plan_files)
    text = json.loads(config.read_text())
    del text["wallets"]
    config.write_text(json.dumps(text))
    done = jupcron("--config", str(config), command, "--wallet", "savings", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert [r["wallet"] for r in json.loads(done.stdout)] == ["savings"]
