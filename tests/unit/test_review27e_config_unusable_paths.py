"""A config path no file can have is a `ConfigError` at its line, never an exception
no caller expects (the daemon's config watch keeps the old config on a
`ConfigError`, and ended the daemon on anything else; a command said "unexpected
ValueError"): a NUL character (YAML's ``"\\0"``) in a keypair, key file, folder or
SQLite path (`realpath` and every open raise `ValueError` on it), and a SQLite URL
with a port that is not a number (`make_url` raises `ValueError`, not the
`ArgumentError` the loader caught)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.config import load_config
from jupcron.errors import ConfigError

CASES = [
    ('wallet:\n  keypair: "key\\0.json"\n', "wallet.keypair: holds a NUL character"),
    ('wallet:\n  keypair: "/etc/key\\0.json"\n', "wallet.keypair: holds a NUL character"),
    ('wallets:\n  x: {keypair: "k\\0"}\n', "wallets.x.keypair: holds a NUL character"),
    ('api:\n  key_file: "api\\0key"\n', "api.key_file: holds a NUL character"),
    ('plans:\n  dir: "/etc/plans\\0"\n', "plans.dir: holds a NUL character"),
    ('database:\n  url: "sqlite:///x\\0.db"\n', "database.url: holds a NUL character"),
    ("database:\n  url: sqlite://host:abc/x.db\n", "database.url: has a port that is not a number"),
]


@pytest.mark.parametrize(
    ("text", "message"), CASES, ids=[m.split(":")[0] + str(i) for i, (_, m) in enumerate(CASES)]
)
def test_an_unusable_path_is_a_config_error_at_its_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"jupcron.yaml:2:\d+: {message}"):
        load_config(path, env={})
