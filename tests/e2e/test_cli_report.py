"""`jupcron report` as a subprocess: the daemon's follower records a DCA's fills,
the report's totals equal the emulator's ledger, JSON/CSV/table, the chart;
bad input is one line, exit 1, and creates nothing."""

from __future__ import annotations

import csv
import io
import json
import stat
from pathlib import Path

import pytest

from jupcron.emulator import Emulator
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
ROUNDS = 3
DCA = {
    "name": "dca", "kind": "recurring", "schedule": {"every": "1w"},
    "request": {"inputMint": USDC, "outputMint": SOL,
                "params": {"time": {"inAmount": 150_000_001, "numberOfOrders": ROUNDS,
                                    "interval": 86400}}},
}  # fmt: skip


@pytest.fixture
def followed(daemon_env: DaemonEnvFactory) -> DaemonEnv:
    """A DCA fired by hand and a swap; the daemon's follower records the DCA's fills
    (the keeper plays a day in half a second)."""
    env = daemon_env(emulator=Emulator(seed=5, keeper_speed=2 * 86400))
    env.write_config(follow={"interval": 1})
    env.write_plans(DCA, swap_plan("swap", {"every": "1w"}, amount=2_000_000))
    env.apply()
    assert env.jupcron("fire", "dca").returncode == 0
    assert env.jupcron("fire", "swap").returncode == 0
    proc = env.start()
    try:
        done = env.wait_until(lambda: env.rows("plan_name = 'dca' AND fills = 3") != [], 30)
        assert done, env.log_of(proc)
    finally:
        assert env.stop(proc) == 0
    return env


def test_report_json_totals_equal_the_emulator_ledger(followed: DaemonEnv) -> None:
    done = followed.jupcron("report", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["plan_name"]: r for r in json.loads(done.stdout)}
    ledger = followed.emulator.ledger.fills
    assert len(ledger) == ROUNDS
    dca = rows["dca"]
    assert dca["spent"] == str(sum(f["in"] for f in ledger)) == "150000001"
    assert dca["received"] == str(sum(f["out"] for f in ledger))
    assert dca["fills"] == ROUNDS
    assert dca["runs"] == {"succeeded": 1}
    assert (dca["input_mint"], dca["output_mint"]) == (USDC, SOL)
    assert (dca["input_symbol"], dca["output_symbol"]) == ("USDC", "SOL")  # token facts
    assert dca["spent_ui"] == "150.000001"
    assert dca["fees"] == [{"mint": SOL, "amount": str(sum(f["fee"] for f in ledger)),
                            "amount_ui": dca["fees"][0]["amount_ui"]}]  # fmt: skip
    swap = rows["swap"]
    (execution,) = [e for e in followed.emulator.ledger.executions.values() if e.kind == "swap"]
    assert swap["received"] == execution.answer["outputAmountResult"]
    assert swap["spent"] == "2000000"
    for row in rows.values():  # amounts are strings: a u64 is no JSON double
        assert isinstance(row["spent"], str)
        assert isinstance(row["received"], str)


def test_report_filters_table_csv_and_chart(followed: DaemonEnv, tmp_path: Path) -> None:
    one = json.loads(followed.jupcron("report", "--plan", "dca", "--format", "json").stdout)
    assert [r["plan_name"] for r in one] == ["dca"]
    later = json.loads(
        followed.jupcron("report", "--since", "2100-01-01", "--format", "json").stdout
    )
    assert {r["plan_name"]: r["fills"] for r in later} == {"dca": 0, "swap": 0}
    table = followed.jupcron("report")
    assert table.returncode == 0
    assert "150.000001 USDC" in table.stdout
    text = followed.jupcron("report", "--format", "csv").stdout
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert {r["plan_name"]: r["fills"] for r in parsed} == {"dca": "3", "swap": "1"}
    chart = tmp_path / "out" / "fills.svg"
    drawn = followed.jupcron("report", "--chart", str(chart))
    assert drawn.returncode == 0, drawn.stderr
    assert f"chart written to {chart}" in drawn.stdout
    assert stat.S_IMODE(chart.stat().st_mode) == 0o600  # whatever the umask
    body = chart.read_text()
    assert "<svg" in body
    assert body.count("<path") > 20  # axes, lines, markers and the glyphs of the text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chart", "x.jpg"], "x.jpg: the chart must be a .png or .svg file"),
        (["--since", "2026-02-01", "--until", "2026-01-01"], "--since must be before --until"),
        (["--since", "yesterday"], "'yesterday' is not an ISO 8601 date or time"),
        (["--plan", "nope"], "no plan named 'nope'"),
        (["--format", "xml"], "'xml' is not one of"),
    ],
)
def test_bad_input_is_one_clear_line_and_changes_nothing(
    daemon_env: DaemonEnvFactory, args: list[str], message: str
) -> None:
    env = daemon_env()
    before = sorted(p.name for p in env.root.iterdir())
    done = env.jupcron("report", *args)
    assert done.returncode in (1, 2)
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in env.root.iterdir()) == before


def test_report_never_creates_a_database_file(daemon_env: DaemonEnvFactory, tmp_path: Path) -> None:
    env = daemon_env()
    missing = tmp_path / "nothing-here.db"
    env.write_config(database={"url": f"sqlite:///{missing}"})
    done = env.jupcron("report", "--chart", str(tmp_path / "c.png"))
    assert done.returncode == 1
    assert str(missing) in done.stderr
    assert not missing.exists()
    assert not (tmp_path / "c.png").exists()


JUP = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"


def test_a_plan_that_changed_its_pair_is_reported_per_pair(
    daemon_env: DaemonEnvFactory, tmp_path: Path
) -> None:
    """Bought SOL, then edited to buy JUP: one object per pair, never SOL and JUP
    added together; the table has a row each and the totals stay per token."""
    env = daemon_env(emulator=Emulator(seed=5))
    env.write_plans(swap_plan("buy", {"every": "1w"}, amount=2_000_000))
    env.apply()
    assert env.jupcron("fire", "buy").returncode == 0
    edited = swap_plan("buy", {"every": "1w"}, amount=3_000_000)
    edited["request"]["outputMint"] = JUP
    env.write_plans(edited)
    env.apply()
    assert env.jupcron("fire", "buy").returncode == 0
    done = env.jupcron("report", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["plan_name"], r["output_symbol"], r["spent"], r["fills"]) for r in rows] == [
        ("buy", "JUP", "3000000", 1),
        ("buy", "SOL", "2000000", 1),
    ]
    assert all(r["runs"] == {"succeeded": 2} for r in rows)
    table = env.jupcron("report").stdout
    lines = [line for line in table.splitlines() if line.startswith("buy ")]
    assert len(lines) == 2, table
    assert "USDC per JUP" in lines[0]
    assert "per SOL" not in lines[0]
    assert "USDC per SOL" in lines[1]
    assert "JUP" not in lines[1]
    assert "total over 1 plans, 2 fills" in table
    csv_rows = list(csv.DictReader(io.StringIO(env.jupcron("report", "--format", "csv").stdout)))
    assert [(r["plan_name"], r["output_symbol"]) for r in csv_rows] == [
        ("buy", "JUP"),
        ("buy", "SOL"),
    ]
    chart = tmp_path / "pairs.svg"
    drawn = env.jupcron("report", "--chart", str(chart))
    assert drawn.returncode == 0, drawn.stderr
    body = chart.read_text()
    assert "buy (USDC → JUP)" in body  # a panel per pair
    assert "buy (USDC → SOL)" in body
