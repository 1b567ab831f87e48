"""`jupcron plans validate / apply` against the config's wallets, as a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import jupcron
from tests.fixtures.plans import PlanFiles, swap_plan


def config_with_wallets(tmp_path: Path, db_url: str, plans_dir: Path, **extra: object) -> Path:
    path = tmp_path / "jupcron.yaml"
    config = {
        "database": {"url": db_url},
        "plans": {"dir": str(plans_dir)},
        "wallets": {"savings": {"keypair": "savings.json"}},
        **extra,
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_validate_and_apply_refuse_a_wallet_the_config_does_not_have(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    folder = plan_files(
        {"a.yaml": [swap_plan("alpha", wallet="savings"), swap_plan("beta", wallet="trading")]}
    )
    config = config_with_wallets(tmp_path, sqlite_url, folder, wallet={"keypair": "main.json"})
    unknown = (
        f"{folder}/a.yaml:27:7: wallet: unknown wallet 'trading': the config has default, "
        "savings (add it under wallets:)"
    )

    checked = jupcron("--config", str(config), "plans", "validate", str(folder))
    assert checked.returncode == 1
    assert checked.stderr.strip() == unknown
    assert checked.stdout == ""

    applied = jupcron("--config", str(config), "plans", "apply")
    assert applied.returncode == 1
    assert applied.stderr.strip() == unknown
    assert applied.stdout == ""
    listed = jupcron("--config", str(config), "plans", "list", "--format", "json")
    assert json.loads(listed.stdout) == []  # nothing written

    plan_files({"a.yaml": [swap_plan("alpha", wallet="savings"), swap_plan("beta")]})
    ok = jupcron("--config", str(config), "plans", "apply")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[:2] == ["+ alpha", "+ beta"]


def test_with_only_named_wallets_a_plan_must_name_its_wallet(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": swap_plan("alpha")})
    config = config_with_wallets(tmp_path, sqlite_url, folder)
    checked = jupcron("--config", str(config), "plans", "validate", str(folder))
    assert checked.returncode == 1
    assert checked.stderr.strip() == (
        f"{folder}/a.yaml:1:1: wallet: no default wallet: the config sets wallets: but not "
        "wallet.keypair, so a plan must name its wallet (wallet: NAME; configured: savings)"
    )


def test_a_wallets_entry_named_default_is_a_config_error(
    tmp_path: Path, plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": swap_plan("alpha")})
    config = tmp_path / "jupcron.yaml"
    config.write_text("wallets:\n  default:\n    keypair: a.json\n", encoding="utf-8")
    checked = jupcron("--config", str(config), "plans", "validate", str(folder))
    assert checked.returncode != 0
    assert "Traceback" not in checked.stderr
    assert f"{config}:1:1: wallets: 'default' is the name of wallet.keypair's wallet" in (
        checked.stderr
    )
