"""`jupcron tx inspect --plan FILE|NAME` as a subprocess: a transaction judged as a run
of the plan is judged, on genuine transactions (tests/fixtures/real) and hostile
variants of them; bad input gets a clear error, never a traceback."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from tests.e2e.cli import jupcron
from tests.fixtures import real
from tests.fixtures.mutate import mutate, put

CORPUS = {t.name: t for t in real.load_all()}
METIS = CORPUS["ultra-order-usdc-sol-route_v2-metis"]
RFQ = CORPUS["ultra-order-usdc-sol-jupiterz-rfq-2"]
WITHDRAWAL = CORPUS["trigger-v2-dca-cancel-withdrawal"]


def _setup(tmp_path: Path, tx: real.RealTx) -> tuple[Path, Path]:
    config = tmp_path / "jupcron.yaml"
    config.write_text(f"database:\n  url: sqlite:///{tmp_path / 'j.db'}\n")
    plan = tmp_path / "plan.yaml"
    doc = {**tx.plan, "schedule": {"every": "1d"}}
    plan.write_text(json.dumps(doc))
    return config, plan


def _inspect(config: Path, tx: real.RealTx, *args: str, b64: str | None = None):  # type: ignore[no-untyped-def]
    return jupcron(
        "--config", str(config), "tx", "inspect", "--wallet", tx.wallet, *args, "-",
        input=(b64 or tx.transaction) + "\n",
    )  # fmt: skip


def test_a_genuine_swap_is_accepted_for_its_plan_file(tmp_path: Path) -> None:
    config, plan = _setup(tmp_path, METIS)
    done = _inspect(config, METIS, "--plan", str(plan), "--ordered", json.dumps(METIS.ordered))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ACCEPTED" in done.stdout
    assert not (tmp_path / "j.db").exists()  # a plan file needs no database


def test_a_hostile_variant_is_refused_for_the_same_plan(tmp_path: Path) -> None:
    config, plan = _setup(tmp_path, METIS)
    hostile = mutate(METIS.transaction, 4, edit=lambda d: put(d, 24, struct.pack("<H", 10_000)))
    done = _inspect(config, METIS, "--plan", str(plan), b64=hostile)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "allows 10000 bps of slippage" in done.stdout
    # the same transaction without a plan: the plan's terms are what refuse it
    assert _inspect(config, METIS, b64=hostile).returncode == 0


def test_a_jupiterz_fill_is_accepted_with_the_gasless_answer(tmp_path: Path) -> None:
    config, plan = _setup(tmp_path, RFQ)
    done = _inspect(config, RFQ, "--plan", str(plan), "--ordered", '{"gasless": true}')
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_trigger_v2_withdrawal_needs_the_vault_from_the_order(tmp_path: Path) -> None:
    config, plan = _setup(tmp_path, WITHDRAWAL)
    without = _inspect(config, WITHDRAWAL, "--plan", str(plan))
    assert without.returncode == 3, without.stdout + without.stderr
    assert "vault is not known" in without.stdout
    ordered = json.dumps(WITHDRAWAL.ordered)
    done = _inspect(config, WITHDRAWAL, "--plan", str(plan), "--ordered", ordered)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_stored_plan_is_judged_by_name(tmp_path: Path) -> None:
    config, plan = _setup(tmp_path, METIS)
    assert jupcron("--config", str(config), "db", "upgrade").returncode == 0
    applied = jupcron("--config", str(config), "plans", "apply", str(plan))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    done = _inspect(config, METIS, "--plan", METIS.plan["name"])
    assert done.returncode == 0, done.stdout + done.stderr
    other = _inspect(config, METIS, "--plan", METIS.plan["name"], b64=mutate(
        METIS.transaction, 4, edit=lambda d: put(d, 26, struct.pack("<H", 100))
    ))  # fmt: skip
    assert other.returncode == 3
    assert "platform fee of 100 bps" in other.stdout


def test_a_malformed_ordered_fact_is_a_usage_error_never_a_dropped_check(
    tmp_path: Path,
) -> None:
    """Before: ``--ordered '{"price": "x"}'`` was read as "no price facts", so the plan's
    ``limits.min_out`` went unchecked and a transaction refused without it was ACCEPTED."""
    config, plan = _setup(tmp_path, METIS)
    doc = {**METIS.plan, "schedule": {"every": "1d"}, "limits": {"min_out": 600_000_000}}
    plan.write_text(json.dumps(doc))  # more SOL than the route guarantees for 100 USDC
    held = _inspect(config, METIS, "--plan", str(plan))
    assert held.returncode == 3, held.stdout + held.stderr
    answered = _inspect(config, METIS, "--plan", str(plan), "--ordered", json.dumps(METIS.ordered))
    assert answered.returncode == 3, answered.stdout + answered.stderr
    window = {"min_out": "600000000", "reference_out": None, "max_price_deviation_bps": 300}
    cases = [
        ({"price": "x"}, 'price: must be an object {min_out, reference_out, '
                         'max_price_deviation_bps} as a run\'s \'ordered\' event records it, got "x"'),
        ({"price": None}, "price: must be an object"),
        ({"price": {}}, "price: min_out, reference_out, max_price_deviation_bps missing"),
        ({"price": {**window, "min_out": "x"}}, 'price.min_out: must be a whole number'),
        ({"price": {**window, "min_out": -1}}, "price.min_out: must be a whole number"),
        ({"price": {**window, "problem": 7}}, "price.problem: must be a string or null"),
        ({"feeBps": "2%"}, 'fee_bps: must be a whole number (or its digits) or null, got "2%"'),
        ({"outAmount": 1.5}, "out_amount: must be a whole number"),
        ({"gasless": "false"}, 'gasless: must be true, false or null, got "false"'),
        ({"vault": 7}, "vault: must be a string or null, got 7"),
    ]  # fmt: skip
    for ordered, message in cases:
        done = _inspect(config, METIS, "--plan", str(plan), "--ordered", json.dumps(ordered))
        assert done.returncode == 2, (ordered, done.stdout, done.stderr)
        assert "Invalid value for --ordered: " in done.stderr, (ordered, done.stderr)
        assert message in done.stderr, (ordered, done.stderr)
        assert "ACCEPTED" not in done.stdout
        assert "Traceback" not in done.stderr


def test_bad_input_gets_a_clear_error_and_no_traceback(tmp_path: Path) -> None:
    config, plan = _setup(tmp_path, METIS)
    two = tmp_path / "two.yaml"
    doc = {**METIS.plan, "schedule": {"every": "1d"}}
    two.write_text(json.dumps({"plans": [doc, {**doc, "name": "another"}]}))
    cases = [
        (("--plan", str(tmp_path / "missing.yaml")), "no plan file"),
        (("--plan", "no-such-plan"), "no database"),
        (("--plan", str(plan), "--ordered", "{not json"), "not JSON"),
        (("--plan", str(plan), "--ordered", "[1]"), "must be a JSON object"),
        (("--plan", str(two)), "choose one with --name"),
        (("--plan", str(two), "--name", "nope"), "no plan named 'nope'"),
        (("--ordered", "{}"), "--name and --ordered go with --plan"),
    ]
    for args, message in cases:
        done = _inspect(config, METIS, *args)
        assert done.returncode in (1, 2), (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "j.db").exists()  # nothing was created
    picked = _inspect(config, METIS, "--plan", str(two), "--name", "another")
    assert picked.returncode == 0, picked.stdout + picked.stderr
