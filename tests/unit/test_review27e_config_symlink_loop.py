"""A relative path in the config that is a symbolic link loop (``a -> b -> a``: a
keypair, a key file, ``plans.dir``, a SQLite file) is made absolute like any other,
and the file's own read says what is wrong with it. `Path.resolve` raised
`RuntimeError` ("Symlink loop") out of `load_config`, which no caller expects: the
daemon's config watch, which keeps the old config on a `ConfigError`, ended the
daemon on it; every command printed "unexpected RuntimeError"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupcron.chain.wallet import load_wallet
from jupcron.config import load_config
from jupcron.errors import KeypairError


def _loop(folder: Path) -> None:
    os.symlink("b", folder / "a")
    os.symlink("a", folder / "b")


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("wallet:\n  keypair: a\n", lambda c: c.wallet.keypair),
        ("wallets:\n  x: {keypair: a}\n", lambda c: c.wallets["x"].keypair),
        ("api:\n  key_file: a\n", lambda c: c.api.key_file),
        ("plans:\n  dir: a\n", lambda c: c.plans.dir),
        ("database:\n  url: sqlite:///a\n", lambda c: c.database.url.removeprefix("sqlite:///")),
    ],
    ids=["wallet.keypair", "wallets", "api.key_file", "plans.dir", "database.url"],
)
def test_a_symlink_loop_loads_as_its_path(tmp_path: Path, text: str, read) -> None:  # type: ignore[no-untyped-def]
    _loop(tmp_path)
    path = tmp_path / "jupcron.yaml"
    path.write_text(text, encoding="utf-8")
    config = load_config(path, env={})
    assert str(read(config)) == str(tmp_path.resolve() / "a")


def test_the_keypair_read_then_says_why(tmp_path: Path) -> None:
    _loop(tmp_path)
    path = tmp_path / "jupcron.yaml"
    path.write_text("wallet:\n  keypair: a\n", encoding="utf-8")
    config = load_config(path, env={})
    with pytest.raises(KeypairError, match="symbolic links"):
        load_wallet(config.wallet.keypair, {})
