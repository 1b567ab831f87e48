"""`jupcron audit` on SQLite and PostgreSQL with a run whose amount does not fit a
signed 64-bit integer (a u64 does: a memecoin's base units reach 10^19): what the
run spent and received reads to the base unit, as the report says it, never as
``1.0e+19`` — SQLite's NUMERIC turns such text into a double, and its SUM of two
large ones stops the whole command with "integer overflow"."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from jupcron.cli.main import cli
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC

HUGE = 10**19 + 7  # lamports: above 2^63 - 1, below 2^64 - 1


def audit(f: FollowRig, tmp_path: Path) -> list[dict[str, object]]:
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"database": {"url": str(f.engine.url)},
                                  "plans": {"dir": str(tmp_path / "no-plans")}}))  # fmt: skip
    result = CliRunner().invoke(cli, ["--config", str(config), "audit", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = json.loads(result.output)
    return rows


def test_a_run_above_the_signed_64_bit_range_reads_to_the_base_unit(
    make_follow_rig: FollowRigFactory, db_url: str, tmp_path: Path
) -> None:
    f = make_follow_rig(db_url)
    f.rig.emulator.ledger.set_balance(f.rig.wallet.address, SOL, HUGE + 10**12)  # and gas
    plan = f.rig.plan("swap", {"inputMint": SOL, "outputMint": USDC, "amount": HUGE},
                      name="whale")  # fmt: skip
    f.fire(plan)
    (fill,) = f.fills("whale")
    (row,) = audit(f, tmp_path)
    assert row["spent"] == str(fill["in_amount"]) == str(HUGE)
    assert row["received"] == str(fill["out_amount"])
    assert row["fills"] == 1
