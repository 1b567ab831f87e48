"""Review 22c: the operator's view of two config mistakes, through the real command.

Before: ``safety.kill_switch_file: ~/jupcron.stop`` loaded, and after ``touch
~/jupcron.stop`` `jupcron status` said ``kill switch  off`` (exit 0): the daemon
looked at ``<config folder>/~/jupcron.stop``. ``--config FOLDER`` (or
``JUPCRON_CONFIG=FOLDER`` for the emergency ``jupcron pause``) said ``error: 3: Is a
directory``."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.chain.wallet import write_keypair_file
from tests.e2e.cli import jupcron


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    write_keypair_file(tmp_path / "kp.json")
    (tmp_path / "plans").mkdir()
    config = tmp_path / "jupcron.yaml"
    config.write_text("wallet:\n  keypair: kp.json\ndatabase:\n  url: sqlite:///jupcron.db\n"
                      "plans:\n  dir: plans\n")  # fmt: skip
    config.chmod(0o600)
    done = jupcron("--config", str(config), "db", "upgrade")
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_a_kill_switch_file_in_the_home_folder_is_refused_not_ignored(workdir: Path) -> None:
    home = workdir / "home"
    home.mkdir()
    (home / "jupcron.stop").touch()  # the operator's `touch ~/jupcron.stop`
    config = workdir / "ks.yaml"
    config.write_text((workdir / "jupcron.yaml").read_text()
                      + "safety:\n  kill_switch_file: ~/jupcron.stop\n")  # fmt: skip
    config.chmod(0o600)
    done = jupcron("--config", str(config), "status", env={"HOME": str(home)})
    assert "kill switch  off" not in done.stdout, done.stdout
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {config}:8:3: safety.kill_switch_file:"), lines[0]
    assert "'~'" in lines[0], lines[0]


@pytest.mark.parametrize("command", [["status"], ["pause", "--all"], ["config", "check"]])
def test_a_folder_as_the_config_names_the_folder(workdir: Path, command: list[str]) -> None:
    folder = workdir / "plans"
    done = jupcron("--config", str(folder), *command)
    assert done.returncode == 1
    assert done.stderr == f"error: {folder}: is a directory, not a file\n", done.stderr
    done = jupcron(*command, env={"JUPCRON_CONFIG": str(folder)})
    assert done.returncode == 1
    assert done.stderr == f"error: {folder}: is a directory, not a file\n", done.stderr
