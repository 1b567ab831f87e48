"""An empty path in the config (``safety.kill_switch_file: ""``, a keypair, a key or
token file) is refused at its line. It became ``.``, the config's folder, which always
exists: the kill switch was on for good, every slot skipped with "kill switch file .
exists", and a keypair or key file named a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.config import load_config
from jupcron.errors import ConfigError

CASES = [
    ('safety:\n  kill_switch_file: ""\n', "safety.kill_switch_file"),
    ("safety:\n  kill_switch_file: '   '\n", "safety.kill_switch_file"),
    ('api:\n  key_file: ""\n', "api.key_file"),
    ('wallet:\n  keypair: ""\n', "wallet.keypair"),
    ('web:\n  token_file: ""\n', "web.token_file"),
    ('wallets:\n  x: {keypair: ""}\n', "wallets.x.keypair"),
]


@pytest.mark.parametrize(("text", "key"), CASES, ids=[f"{k}{i}" for i, (_, k) in enumerate(CASES)])
def test_an_empty_path_is_refused_at_its_line(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"jupcron.yaml:2:\d+: {key}: is empty"):
        load_config(path, env={})


def test_an_empty_plans_dir_keeps_its_own_words(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text("plans:\n  dir: ''\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r":2:3: plans.dir: is empty: give the folder"):
        load_config(path, env={})
