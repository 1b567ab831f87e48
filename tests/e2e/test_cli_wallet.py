"""`jupcron wallet new` and `jupcron wallet show` as a subprocess."""

from __future__ import annotations

import stat
from pathlib import Path

from jupcron.chain.wallet import load_wallet
from tests.e2e.cli import jupcron


def _config(tmp_path: Path, keypair: Path) -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text(f"wallet:\n  keypair: {keypair.name}\n")  # relative to the config file
    return path


def test_new_writes_a_private_keypair_and_show_prints_its_key(tmp_path: Path) -> None:
    keypair = tmp_path / "id.json"
    made = jupcron("wallet", "new", str(keypair))
    assert made.returncode == 0, made.stderr
    address = made.stdout.strip()
    assert stat.S_IMODE(keypair.stat().st_mode) == 0o600
    assert load_wallet(keypair).address == address
    assert "0600" in made.stderr

    shown = jupcron("--config", str(_config(tmp_path, keypair)), "wallet", "show")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == address + "\n"


def test_new_refuses_to_overwrite(tmp_path: Path) -> None:
    keypair = tmp_path / "id.json"
    keypair.write_text("keep me")
    made = jupcron("wallet", "new", str(keypair))
    assert made.returncode == 1
    assert made.stderr == f"error: {keypair}: already exists; refusing to overwrite it\n"
    assert keypair.read_text() == "keep me"


def test_show_reads_the_systemd_credential(tmp_path: Path) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    made = jupcron("wallet", "new", str(creds / "keypair"))
    config = tmp_path / "jupcron.yaml"
    config.write_text("database:\n  url: sqlite:///x.db\n")
    shown = jupcron(
        "--config", str(config), "wallet", "show", env={"CREDENTIALS_DIRECTORY": str(creds)}
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == made.stdout.strip()


def test_show_with_a_bad_keypair_file_is_one_line(tmp_path: Path) -> None:
    keypair = tmp_path / "id.json"
    keypair.write_text("[1, 2, 3]")
    keypair.chmod(0o600)
    shown = jupcron("--config", str(_config(tmp_path, keypair)), "wallet", "show")
    assert shown.returncode == 1
    assert shown.stderr == (
        f"error: {keypair}: not a Solana keypair file: "
        "expected a JSON array of 64 integers, found 3 items\n"
    )
    assert shown.stdout == ""


def test_show_refuses_an_open_keypair_file(tmp_path: Path) -> None:
    keypair = tmp_path / "id.json"
    jupcron("wallet", "new", str(keypair))
    keypair.chmod(0o644)
    shown = jupcron("wallet", "show", "--keypair", str(keypair))
    assert shown.returncode == 1
    assert shown.stderr.count("\n") == 1
    assert shown.stderr.rstrip().endswith(f"run: chmod 600 {keypair}")


def test_a_missing_keypair_says_how_to_make_one_and_that_works(tmp_path: Path) -> None:
    config = _config(tmp_path, tmp_path / "keys.json")
    missing = jupcron("--config", str(config), "wallet", "show")
    assert missing.returncode == 1
    assert "Traceback" not in missing.stderr
    hint = missing.stderr.strip().rsplit("make a new one with: ", 1)[1].rstrip(")")
    assert hint == f"jupcron wallet new {tmp_path / 'keys.json'}"
    made = jupcron(*hint.split()[1:])  # as the message says
    assert made.returncode == 0, made.stderr
    shown = jupcron("--config", str(config), "wallet", "show")
    assert shown.stdout == made.stdout
