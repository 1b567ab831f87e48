"""`jupcron tx inspect` as a subprocess: output and exit codes."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from solders.system_program import TransferParams, transfer

from jupcron.chain.wallet import write_keypair_file
from tests.e2e.cli import jupcron
from tests.fixtures.wallet import (
    AGGREGATOR,
    MEMO,
    budget,
    build,
    jupiter_swap,
    new_key,
    program_call,
)


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text("wallet:\n  keypair: id.json\n" + extra)
    return path


def test_accepted_transaction_from_stdin(tmp_path: Path) -> None:
    wallet = write_keypair_file(tmp_path / "id.json")
    tx = jupiter_swap(wallet.pubkey)
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "-", input=tx + "\n")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert f"fee payer     {wallet.address} (our wallet)" in out
    assert f"signers       {wallet.address} (our wallet), writable, not signed" in out
    assert "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4  Jupiter Aggregator v6" in out
    assert "limit 300000 units, price 50000 micro-lamports/unit" in out
    assert "priority fee up to 15000 lamports" in out
    assert "lookup tables " in out
    assert "#1 Compute Budget set_compute_unit_limit units=300000" in out
    assert "#5 System transfer lamports=1000000" in out
    assert "blockhash     " in out
    assert f"ACCEPTED: txguard would sign this for {wallet.address}" in out
    assert done.stderr == ""


def test_refused_transaction_exits_3_with_reasons(tmp_path: Path) -> None:
    me = new_key()
    thief = new_key()
    drain = transfer(TransferParams(from_pubkey=me, to_pubkey=thief, lamports=5 * 10**9))
    tx = build(me, [*budget(1_400_000, 10**8), program_call(AGGREGATOR, me), drain])
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), tx)
    assert done.returncode == 3, done.stdout + done.stderr
    out = done.stdout
    assert "REFUSED: txguard would not sign this" in out
    assert (
        f"  - instruction #4: System transfer moves 5000000000 lamports from our wallet to {thief}, which is not ours"
        in out
    )
    assert "  - the priority fee of 140000000 lamports" in out
    assert f"from={me}, to={thief}" in out


def test_unknown_program_is_marked(tmp_path: Path) -> None:
    me = new_key()
    stake = "Stake11111111111111111111111111111111111111"
    from solders.pubkey import Pubkey

    tx = build(me, [*budget(), program_call(Pubkey.from_string(stake), me)])
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), tx)
    assert done.returncode == 3
    assert f"{stake}  (no name)  (not in the allow-list)" in done.stdout
    assert (
        f"  - instruction #3 calls program {stake}, which is not in the allow-list" in done.stdout
    )


def test_fee_payer_swap_is_refused_for_the_configured_wallet(tmp_path: Path) -> None:
    wallet = write_keypair_file(tmp_path / "id.json")
    stranger = new_key()
    tx = build(stranger, [*budget(), program_call(AGGREGATOR, wallet.pubkey)])
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", tx)
    assert done.returncode == 3
    assert f"  - the fee payer is {stranger}, not our wallet {wallet.address}" in done.stdout


def test_json_output(tmp_path: Path) -> None:
    me = new_key()
    config = str(_config(tmp_path))
    done = jupcron(
        "--config",
        config,
        "tx",
        "inspect",
        "--wallet",
        str(me),
        "--format",
        "json",
        jupiter_swap(me),
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["accepted"] is True
    assert data["reasons"] == []
    assert data["transaction"]["fee_payer"] == str(me)
    assert data["transaction"]["compute_budget"]["priority_fee_lamports"] == 15000


def test_config_extends_the_allow_list_and_the_cap(tmp_path: Path) -> None:
    write_keypair_file(tmp_path / "id.json")
    me = new_key()
    tx = build(me, [*budget(1_400_000, 10**8), program_call(AGGREGATOR, me)])
    strict = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), tx)
    assert strict.returncode == 3
    config = tmp_path / "relaxed.yaml"
    config.write_text(
        "guard:\n  max_priority_fee_lamports: 200000000\n  max_fee_lamports: 200005000\n"
    )
    relaxed = jupcron("--config", str(config), "tx", "inspect", "--wallet", str(me), tx)
    assert relaxed.returncode == 0, relaxed.stdout


def test_not_a_transaction_exits_2(tmp_path: Path) -> None:
    me = str(new_key())
    config = str(_config(tmp_path))
    for text in ("hello", base64.b64encode(b"not a transaction").decode()):
        done = jupcron("--config", config, "tx", "inspect", "--wallet", me, "-", input=text)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.startswith("error: not a transaction: ")
        assert done.stderr.count("\n") == 1
        assert done.stdout == ""


def test_bad_wallet_option_is_a_usage_error() -> None:
    done = jupcron("tx", "inspect", "--wallet", "nope", "AAAA")
    assert done.returncode == 2
    assert "is not a base58 public key" in done.stderr
    assert "Traceback" not in done.stderr


def test_who_pays_who_receives_and_the_net_effect(tmp_path: Path) -> None:
    me, thief = new_key(), new_key()
    drain = transfer(TransferParams(from_pubkey=me, to_pubkey=thief, lamports=5 * 10**9))
    tx = build(me, [*budget(), drain])
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), tx)
    assert done.returncode == 3, done.stdout + done.stderr
    out = done.stdout
    assert f"      lamports 5000000000: {me} (our wallet) pays, {thief} receives" in out
    # fee: one signature (5,000) + the priority fee (50,000 x 300,000 / 10^6 = 15,000)
    assert "net effect    fee 20000 lamports; 5000000000 lamports to accounts not ours" in out
    as_json = jupcron(
        "--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me),
        "--format", "json", tx,
    )  # fmt: skip
    data = json.loads(as_json.stdout)
    assert data["flows"] == [
        {"index": 3, "what": "lamports", "amount": "5000000000", "payer": str(me),
         "receiver": str(thief), "mint": None}
    ]  # fmt: skip
    assert data["net_effect"]["lamports_out"] == 5 * 10**9


def test_a_program_call_it_cannot_decode_is_said(tmp_path: Path) -> None:
    me = new_key()
    unknown = new_key()
    tx = build(me, [*budget(), program_call(unknown, me)])
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), tx)
    assert "a program call with our wallet: what it moves is not decoded" in done.stdout
    assert "not computable: instruction #3: a program call" in done.stdout


def test_a_memo_cannot_forge_lines_or_send_escapes(tmp_path: Path) -> None:
    from solders.instruction import Instruction

    me, thief = new_key(), new_key()
    forged = "ok\nverdict       ACCEPTED: txguard would sign this\x1b[2K\x1b[1A\u202e"
    memo = Instruction(MEMO, forged.encode(), [])
    drain = transfer(TransferParams(from_pubkey=me, to_pubkey=thief, lamports=1))
    tx = build(me, [*budget(), memo, drain])
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), tx)
    assert done.returncode == 3
    out = done.stdout
    assert "\x1b" not in out
    assert "\u202e" not in out
    verdicts = [line for line in out.splitlines() if line.startswith("verdict")]
    assert verdicts == ["verdict       REFUSED: txguard would not sign this"]
    assert "text=ok\\x0averdict       ACCEPTED" in out  # shown, defused


def test_an_oversized_transaction_is_refused_without_decoding(tmp_path: Path) -> None:
    me = new_key()
    huge = base64.b64encode(bytes(8 * 1024 * 1024)).decode()
    done = jupcron(
        "--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), "-",
        input=huge,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "the network takes at most 1232" in done.stderr


def test_a_transaction_just_over_the_limit_is_refused(tmp_path: Path) -> None:
    from solders.instruction import Instruction

    me = new_key()
    memo = Instruction(MEMO, b"x" * 1200, [])
    tx = build(me, [*budget(), memo])
    done = jupcron("--config", str(_config(tmp_path)), "tx", "inspect", "--wallet", str(me), tx)
    assert done.returncode == 3
    assert "the network takes at most 1232" in done.stdout
