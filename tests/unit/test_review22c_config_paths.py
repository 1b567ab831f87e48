"""Review 22c: config paths an operator writes as a shell would read them.

A path beginning with ``~`` was made relative to the config's folder
(``/etc/jupcron/~/jupcron.stop``): the kill switch file the operator touches in an
emergency (``touch ~/jupcron.stop``) was never the one the daemon looked at, and
nothing said so. And ``--config FOLDER`` ended as ``error: 3: Is a directory`` (a
file descriptor's number, not the path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.config import load_config
from jupcron.errors import ConfigError
from jupcron.runner.killswitch import kill_switch


def write(folder: Path, text: str) -> Path:
    path = folder / "jupcron.yaml"
    path.write_text(text)
    path.chmod(0o600)
    return path


# (the config's text, the position and key the error names)
TILDES = [
    ("safety:\n  kill_switch_file: ~/jupcron.stop\n", ":2:3: safety.kill_switch_file"),
    ("wallet:\n  keypair: ~/.config/solana/id.json\n", ":2:3: wallet.keypair"),
    ("wallets:\n  savings:\n    keypair: ~/savings.json\n", ":3:5: wallets.savings.keypair"),
    ("api:\n  key_file: ~/jupiter-key\n", ":2:3: api.key_file"),
    ("plans:\n  dir: ~/plans\n", ":2:3: plans.dir"),
    ("web:\n  token_file: ~/token\n", ":2:3: web.token_file"),
    ("database:\n  url: sqlite:///~/jupcron.db\n", ":2:3: database.url"),
]


@pytest.mark.parametrize(("text", "where"), TILDES, ids=[w for _, w in TILDES])
def test_a_path_from_the_home_folder_is_refused_with_its_position(
    tmp_path: Path, text: str, where: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    message = str(caught.value)
    assert message.startswith(f"{path}{where}:"), message
    assert "'~'" in message, message
    assert "absolute path" in message, message
    assert len(message.splitlines()) == 1, message


def test_the_kill_switch_touched_in_the_home_folder_is_never_silently_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the operator sees: before, the config loaded, and the kill switch was off
    with the file they touched in place."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (home / "jupcron.stop").touch()  # `touch ~/jupcron.stop`
    path = write(tmp_path, "safety:\n  kill_switch_file: ~/jupcron.stop\n")
    try:
        config = load_config(path, env={})
    except ConfigError:
        return  # refused: the operator is told before anything runs
    assert kill_switch(config) is not None, "the kill switch file exists, yet it is off"


def test_a_tilde_inside_a_name_is_an_ordinary_relative_path(tmp_path: Path) -> None:
    path = write(tmp_path, "safety:\n  kill_switch_file: stop~1\nplans:\n  dir: a/~b\n")
    config = load_config(path, env={})
    assert config.safety.kill_switch_file == (tmp_path / "stop~1").resolve()
    assert config.plans.dir == (tmp_path / "a/~b").resolve()


def test_a_folder_given_as_the_config_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, env={})
    assert str(caught.value) == f"{tmp_path}: is a directory, not a file"
