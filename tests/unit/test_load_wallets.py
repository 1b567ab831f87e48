"""`jupcron.chain.wallets.load_wallets`: every configured wallet's keypair, checked at start."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from jupcron.chain.wallet import Wallet, write_keypair_file
from jupcron.chain.wallets import addresses_text, load_wallets, wallets_text
from jupcron.config import load_config
from jupcron.errors import KeypairError


def config_at(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_wallet_by_name(tmp_path: Path) -> None:
    main = write_keypair_file(tmp_path / "main.json")
    savings = write_keypair_file(tmp_path / "savings.json")
    text = "wallet: {keypair: main.json}\nwallets:\n  savings: {keypair: savings.json}\n"
    wallets = load_wallets(load_config(config_at(tmp_path, text), env={}), env={})
    assert wallets == {"default": main, "savings": savings}
    addresses = {name: w.address for name, w in wallets.items()}
    assert wallets_text(addresses) == f"wallets default {main.address}, savings {savings.address}"
    assert addresses_text({"default": main.address}) == main.address


def test_only_named_wallets_load_no_default_and_no_credential(tmp_path: Path) -> None:
    savings = write_keypair_file(tmp_path / "savings.json")
    creds = tmp_path / "creds"
    creds.mkdir()
    write_keypair_file(creds / "keypair")  # not read: there is no default wallet
    config = load_config(config_at(tmp_path, "wallets:\n  savings: {keypair: savings.json}\n"))
    assert load_wallets(config, env={"CREDENTIALS_DIRECTORY": str(creds)}) == {"savings": savings}


def test_a_named_wallets_bad_keypair_is_fatal_and_names_the_wallet(tmp_path: Path) -> None:
    write_keypair_file(tmp_path / "main.json")
    open_file = tmp_path / "savings.json"
    write_keypair_file(open_file)
    os.chmod(open_file, 0o644)
    text = "wallet: {keypair: main.json}\nwallets:\n  savings: {keypair: savings.json}\n"
    config = load_config(config_at(tmp_path, text), env={})
    with pytest.raises(KeypairError) as caught:
        load_wallets(config, env={})
    message = str(caught.value)
    assert message.startswith(f"wallet 'savings': {open_file}")
    assert f"chmod 600 {open_file}" in message
    (tmp_path / "savings.json").unlink()
    with pytest.raises(KeypairError, match=r"^wallet 'savings': .*keypair file not found"):
        load_wallets(config, env={})


def test_one_key_under_two_names_is_refused(tmp_path: Path) -> None:
    wallet = Wallet.generate()
    write_keypair_file(tmp_path / "a.json", wallet)
    shutil.copy(tmp_path / "a.json", tmp_path / "b.json")
    os.chmod(tmp_path / "b.json", 0o600)
    text = "wallets:\n  a: {keypair: a.json}\n  b: {keypair: b.json}\n"
    with pytest.raises(KeypairError) as caught:
        load_wallets(load_config(config_at(tmp_path, text), env={}), env={})
    assert str(caught.value) == (
        f"wallets 'a' and 'b' hold the same key ({wallet.address}): one key, one wallet name"
    )
