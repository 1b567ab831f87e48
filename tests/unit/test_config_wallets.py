"""`wallets:` in the daemon config (DESIGN §3): names, paths, the default wallet."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.config import Config, load_config
from jupcron.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_named_wallets_with_the_default_one(tmp_path: Path) -> None:
    text = (
        "wallet:\n  keypair: main.json\n"
        "wallets:\n  trading:\n    keypair: keys/trading.json\n"
        "  savings: {keypair: /srv/savings.json}\n"
    )
    config = load_config(write(tmp_path, text), env={})
    assert config.wallet_names() == ("default", "savings", "trading")
    assert config.wallet_keypair("default") == tmp_path / "main.json"
    # relative to the config file's folder, like every path in it
    assert config.wallet_keypair("trading") == tmp_path / "keys" / "trading.json"
    assert config.wallet_keypair("savings") == Path("/srv/savings.json")
    with pytest.raises(ConfigError, match="unknown wallet 'nope': the config has default, "):
        config.wallet_keypair("nope")


def test_no_wallets_is_the_one_default_wallet_as_before() -> None:
    config = Config()
    assert config.wallet_names() == ("default",)
    assert config.has_default_wallet
    assert config.wallet_keypair("default") is None  # the systemd credential


def test_only_named_wallets_means_no_default_wallet(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "wallets:\n  a: {keypair: a.json}\n"), env={})
    assert not config.has_default_wallet
    assert config.wallet_names() == ("a",)
    with pytest.raises(ConfigError, match=r"no default wallet: .* a plan must name its wallet"):
        config.wallet_keypair("default")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("wallets:\n  default: {keypair: a.json}\n",
         "wallets: 'default' is the name of wallet.keypair's wallet: give this one another name"),
        ("wallets:\n  'two words': {keypair: a.json}\n",
         "wallets: wallet name 'two words' must be 1-64 letters"),
        ("wallets:\n  a: {keypair: k.json}\n  b: {keypair: k.json}\n",
         "wallets.b: its keypair file {dir}/k.json is wallets.a's already"),
        ("wallet: {keypair: k.json}\nwallets:\n  a: {keypair: ./k.json}\n",
         "wallets.a: its keypair file {dir}/k.json is wallet.keypair's already"),
        ("wallets:\n  a: {}\n", ":3: wallets.a.keypair: missing required key"),
        ("wallets:\n  a: {keypair: a.json, mode: 384}\n", "unknown key 'wallets.a.mode'"),
        ("wallets:\n  a: a.json\n", "wallets.a must be a mapping {keypair: PATH}"),
    ],
)  # fmt: skip
def test_wallet_mistakes_are_config_errors(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    message = str(caught.value)
    assert message.startswith(f"{path}:")
    assert expected.replace("{dir}", str(tmp_path)) in message
    assert len(message.splitlines()) == 1
