"""Review 22c: ``--config ""`` (a script's ``--config "$CFG"`` with CFG unset) is refused.

Before: an empty ``--config`` counted as none given, and the command quietly used
``$JUPCRON_CONFIG`` or /etc/jupcron/jupcron.yaml: a staging script's ``jupcron
--config "$CFG" fire NAME`` fired the plan of that name on the other config's
database and wallet, signing a real order."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.chain.wallet import write_keypair_file
from jupcron.config import load_config
from jupcron.errors import ConfigError
from tests.e2e.cli import jupcron


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """A good config with a migrated database: the one $JUPCRON_CONFIG names."""
    write_keypair_file(tmp_path / "kp.json")
    (tmp_path / "plans").mkdir()
    config = tmp_path / "jupcron.yaml"
    config.write_text("wallet:\n  keypair: kp.json\ndatabase:\n  url: sqlite:///jupcron.db\n"
                      "plans:\n  dir: plans\n")  # fmt: skip
    config.chmod(0o600)
    assert jupcron("--config", str(config), "db", "upgrade").returncode == 0
    return config


@pytest.mark.parametrize(
    "command",
    [["pause", "--all"], ["status"], ["db", "upgrade"], ["wallet", "show"],
     ["plans", "list"], ["fire", "nope"]],
    ids=lambda c: " ".join(c),
)  # fmt: skip
def test_an_empty_config_option_is_an_error_not_another_config(
    other: Path, command: list[str]
) -> None:
    before = other.with_name("jupcron.db").read_bytes()
    done = jupcron("--config", "", *command, env={"JUPCRON_CONFIG": str(other)})
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr
    assert done.stdout == "", done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--config" in lines[0], lines[0]
    assert "empty" in lines[0], lines[0]
    assert other.with_name("jupcron.db").read_bytes() == before  # nothing written there


def test_load_config_refuses_an_empty_path(other: Path) -> None:
    with pytest.raises(ConfigError, match="empty"):
        load_config("", env={"JUPCRON_CONFIG": str(other)})
