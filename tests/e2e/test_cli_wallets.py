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


def _two_wallets(tmp_path: Path, db_url: str) -> tuple[Path, str, str]:
    """A config with the default wallet and `savings`, each a keypair file made by
    `jupcron wallet new`; their addresses."""
    made = [jupcron("wallet", "new", str(tmp_path / f"{n}.json")) for n in ("main", "savings")]
    assert all(m.returncode == 0 for m in made), [m.stderr for m in made]
    main, savings = (m.stdout.strip() for m in made)
    config = config_with_wallets(tmp_path, db_url, tmp_path / "plans",
                                 wallet={"keypair": "main.json"})  # fmt: skip
    return config, main, savings


def test_wallet_show_lists_every_wallet(tmp_path: Path, sqlite_url: str) -> None:
    config, main, savings = _two_wallets(tmp_path, sqlite_url)
    shown = jupcron("--config", str(config), "wallet", "show")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [f"default  {main}", f"savings  {savings}"]
    one = jupcron("--config", str(config), "wallet", "show", "--name", "savings")
    assert one.stdout == savings + "\n"
    listed = jupcron("--config", str(config), "wallet", "show", "--format", "json")
    assert json.loads(listed.stdout) == [
        {"name": "default", "address": main},
        {"name": "savings", "address": savings},
    ]
    unknown = jupcron("--config", str(config), "wallet", "show", "--name", "trading")
    assert unknown.returncode == 1
    assert "unknown wallet 'trading': the config has default, savings" in unknown.stderr


def test_tx_inspect_judges_a_plan_file_for_the_plans_wallet(
    tmp_path: Path, sqlite_url: str
) -> None:
    import random

    from solders.pubkey import Pubkey

    from jupcron.emulator.txbuild import build_unsigned, to_b64
    from tests.fixtures.plans import SOL, USDC

    config, _, savings = _two_wallets(tmp_path, sqlite_url)
    tx = to_b64(build_unsigned("swap", Pubkey.from_string(savings), rng=random.Random(5),
                               input_mint=USDC, output_mint=SOL, amount=1_000_000))  # fmt: skip
    verdicts = {}
    for wallet in ("savings", "default"):
        plan = tmp_path / f"{wallet}.yaml"
        plan.write_text(json.dumps(swap_plan("swap", wallet=wallet)), encoding="utf-8")
        verdicts[wallet] = jupcron(
            "--config", str(config), "tx", "inspect", "--plan", str(plan), "-", input=tx + "\n"
        )  # fmt: skip
    assert verdicts["savings"].returncode == 0, verdicts["savings"].stdout
    assert "ACCEPTED" in verdicts["savings"].stdout
    # the same transaction as a run of the default wallet's plan: not its fee payer
    assert verdicts["default"].returncode == 3, verdicts["default"].stdout
    assert "REFUSED" in verdicts["default"].stdout


def test_audit_report_and_status_per_wallet(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    from datetime import UTC, datetime

    from jupcron.store import plans as store_plans
    from jupcron.store.engine import make_engine, session_factory, transaction
    from tests.fixtures.runs import skip_run

    folder = plan_files({"a.yaml": [swap_plan("alpha"), swap_plan("beta", wallet="savings")]})
    config = config_with_wallets(tmp_path, sqlite_url, folder, wallet={"keypair": "main.json"})
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

    def cli(*args: str) -> str:
        done = jupcron("--config", str(config), *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    rows = json.loads(cli("audit", "--wallet", "savings", "--format", "json"))
    assert [(r["plan_name"], r["wallet"]) for r in rows] == [("beta", "savings")]
    table = cli("audit").splitlines()
    assert table[0].split()[:3] == ["run_id", "plan_name", "wallet"]
    reports = json.loads(cli("report", "--wallet", "default", "--format", "json"))
    assert [(r["plan_name"], r["wallet"]) for r in reports] == [("alpha", "default")]
    status = json.loads(cli("status", "--format", "json"))
    assert {p["name"]: p["wallet"] for p in status["plans"]} == {
        "alpha": "default", "beta": "savings",
    }  # fmt: skip
    assert "wallet" in cli("status").split("plans (2)", 1)[1].splitlines()[1].split()
