"""Request fields as API.md types them, end to end (plan file -> store -> client ->
the emulator over HTTP): computeUnitPrice in every documented form, recurring
price bounds as exact JSON numbers, and the shipped trigger-cancel example
against a `jupcron emulator` that nobody seeded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from solders.keypair import Keypair
from sqlalchemy import text

from jupcron.chain.wallet import write_keypair_file
from jupcron.emulator.ledger import TriggerOrder
from jupcron.store.engine import make_engine
from jupcron.txguard.decode import read, summarize
from tests.e2e.cli import jupcron
from tests.fixtures.daemon import SOL, USDC, DaemonEnvFactory

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CU_PRICE = 50_000  # what the emulator builds for "auto"


def unsigned_of(db_url: str, plan: str) -> str:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            sql = text("SELECT r.unsigned_tx FROM runs r JOIN plans p ON p.id = r.plan_id "
                       "WHERE p.name = :name")  # fmt: skip
            return str(conn.execute(sql, {"name": plan}).scalar_one())
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("written", "micro_lamports"),
    [("", DEFAULT_CU_PRICE), ("auto", DEFAULT_CU_PRICE), ("700000", 700_000),
     ('"700000"', 700_000)],
    ids=["omitted", "auto", "integer", "digit-string"],
)  # fmt: skip
def test_every_documented_compute_unit_price_cancels_an_order(
    daemon_env: DaemonEnvFactory, written: str, micro_lamports: int
) -> None:
    env = daemon_env()
    order = str(Keypair().pubkey())
    env.emulator.ledger.add_trigger_order(
        TriggerOrder(order=order, maker=env.wallet.address, input_mint=USDC, output_mint=SOL,
                     making_amount=5_000_000, taking_amount=30_000_000)
    )  # fmt: skip
    price = f"\n  computeUnitPrice: {written}" if written else ""
    (env.plans / "cancel.yaml").write_text(
        f"name: cancel\nkind: trigger-cancel\nschedule: {{every: 1d}}\n"
        f"request:\n  order: {order}{price}\n"
    )
    validated = jupcron("plans", "validate", str(env.plans))
    assert validated.returncode == 0, validated.stderr
    env.apply()
    fired = env.jupcron("fire", "cancel")
    assert fired.returncode == 0, fired.stdout + fired.stderr
    assert "succeeded" in fired.stdout
    assert env.emulator.ledger.trigger_orders[order].status == "Cancelled"
    tx = read(unsigned_of(env.db_url, "cancel")).tx
    budget = summarize(tx, {}).compute_budget
    assert budget.unit_price_micro_lamports == micro_lamports


@pytest.mark.parametrize("written", ["0", '"0"', '"12.5"', '"fast"', "-3", "true"])
def test_a_bad_compute_unit_price_is_one_line(tmp_path: Path, written: str) -> None:
    plan = tmp_path / "cancel.yaml"
    plan.write_text(
        "name: cancel\nkind: trigger-cancel\nschedule: {every: 1d}\n"
        f"request:\n  order: 9yXwWmT3rAEdGBVLbD4pgxQTcDx4mQ3BFx2XoeqF1tmZ\n"
        f"  computeUnitPrice: {written}\n"
    )
    done = jupcron("plans", "validate", str(plan))
    assert done.returncode == 1
    assert done.stderr == (
        f"{plan}:6:3: request.computeUnitPrice: must be 'auto' or a positive integer "
        "(micro-lamports)\n"
    )


def test_recurring_price_bounds_reach_the_api_as_exact_json_numbers(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    (env.plans / "dca.yaml").write_text(
        "name: dca\nkind: recurring\nschedule: {every: 1d}\nrequest:\n"
        f"  inputMint: {USDC}\n  outputMint: {SOL}\n  params:\n    time:\n"
        "      inAmount: 200000000\n      numberOfOrders: 2\n      interval: 86400\n"
        "      minPrice: 0.000123456789012345678901   # more digits than a float holds\n"
        '      maxPrice: "250.5"                      # a string is read as a number\n'
    )
    env.apply()
    fired = env.jupcron("fire", "dca")
    assert fired.returncode == 0, fired.stdout + fired.stderr  # the emulator refuses strings
    (issued,) = [o for o in env.emulator.ledger.issued.values() if o.kind == "recurring"]
    assert issued.extra["minPrice"] == "0.000123456789012345678901"
    assert issued.extra["maxPrice"] == "250.5"


@pytest.fixture
def emulator_process() -> Iterator[str]:
    """`jupcron emulator` as a user starts it; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupcron", "emulator", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        proc.terminate()
        proc.wait(15)
        if proc.stdout is not None:
            proc.stdout.close()


def test_the_trigger_cancel_example_runs_against_an_unseeded_emulator(
    tmp_path: Path, emulator_process: str
) -> None:
    url = emulator_process
    write_keypair_file(tmp_path / "keypair.json")
    (tmp_path / "jupcron.yaml").write_text(
        f"api:\n  base_url: {url}\nwallet:\n  keypair: keypair.json\n"
        "database:\n  url: sqlite:///jupcron.db\n"
    )
    config = ["--config", str(tmp_path / "jupcron.yaml")]
    example = ROOT / "config" / "plans" / "trigger-cancel.yaml"
    for args in (["db", "upgrade"], ["plans", "apply", str(example)]):
        done = jupcron(*config, *args)
        assert done.returncode == 0, (args, done.stderr)
    fired = jupcron(*config, "fire", "expire-limit-order")
    assert fired.returncode == 0, fired.stdout + fired.stderr
    assert "succeeded" in fired.stdout
    ledger = httpx.get(f"{url}/_emulator/ledger", timeout=10).json()  # docs/emulator.md
    (order,) = [o for o in ledger["triggerOrders"] if o["order"] in example.read_text()]
    assert order["status"] == "Cancelled"
    again = jupcron(*config, "fire", "expire-limit-order")  # nothing left to cancel
    assert again.returncode == 1  # not succeeded: nothing was done
    assert "skipped" in again.stdout  # recorded as such, never failed (nothing to alert)
    assert "nothing to cancel" in again.stdout
    assert "no matching orders found" in again.stdout
    assert httpx.post(f"{url}/_emulator/reset", timeout=10).json() == {"reset": True}
    after_reset = httpx.get(f"{url}/_emulator/ledger", timeout=10).json()["triggerOrders"]
    assert [o["status"] for o in after_reset if o["order"] == order["order"]] == ["Open"]
