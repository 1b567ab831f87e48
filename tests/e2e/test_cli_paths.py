"""Relative paths in the config follow the config file's folder, not the folder a
command runs in; only `jupcron db upgrade` creates a SQLite database file."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupcron.chain.wallet import write_keypair_file
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from tests.e2e.cli import jupcron
from tests.fixtures.daemon import swap_plan
from tests.support import clifork

API_KEY = "paths-test-key"
CONFIG = """\
api:
  base_url: {url}
  key_file: api-key
wallet:
  keypair: keys/keypair.json
database:
  url: sqlite:///state/jupcron.db
plans:
  dir: plans
safety:
  kill_switch_file: STOP
"""


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    srv = EmulatorServer().start(Emulator(seed=5, api_key=API_KEY))
    yield srv
    srv.stop()


def run_in(cwd: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`jupcron --config CONFIG ARGS` with `cwd` as the current folder."""
    return clifork.run(["--config", str(config), *args], env=os.environ, cwd=cwd)


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_relative_paths_follow_the_config_file(tmp_path: Path, server: EmulatorServer) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    for folder in (site / "keys", site / "state", site / "plans", elsewhere):
        folder.mkdir(parents=True)
    config = site / "jupcron.yaml"
    config.write_text(CONFIG.format(url=server.url))
    (site / "api-key").write_text(API_KEY + "\n")  # the emulator refuses calls without it
    (site / "api-key").chmod(0o600)  # a key file others can read is refused
    wallet = write_keypair_file(site / "keys" / "keypair.json")
    (site / "plans" / "p.yaml").write_text(json.dumps(swap_plan("p", {"every": "1d"})))

    steps = [("db", "upgrade"), ("plans", "apply"), ("wallet", "show"), ("fire", "p")]
    done = {step: run_in(elsewhere, config, *step) for step in steps}
    for step, result in done.items():
        assert result.returncode == 0, (step, result.stdout, result.stderr)
    assert (site / "state" / "jupcron.db").is_file()
    assert "1 added" in done[("plans", "apply")].stdout
    assert wallet.address in done[("wallet", "show")].stdout
    assert "succeeded" in done[("fire", "p")].stdout

    (site / "STOP").touch()  # the kill switch file, named relative to the config
    stopped = run_in(elsewhere, config, "fire", "p")
    assert stopped.returncode == 1
    assert f"kill switch file {site / 'STOP'} exists" in stopped.stdout
    audit = run_in(elsewhere, config, "audit", "--format", "json")
    assert [r["status"] for r in json.loads(audit.stdout)] == ["skipped", "succeeded"]
    assert files_under(elsewhere) == []


@pytest.mark.parametrize(
    "args",
    [("audit",), ("plans", "list"), ("plans", "apply"), ("fire", "p"), ("run",)],
)
def test_no_command_but_db_upgrade_creates_a_database(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    for folder in (site / "keys", site / "plans", elsewhere):
        folder.mkdir(parents=True)
    config = site / "jupcron.yaml"
    config.write_text("database:\n  url: sqlite:///jupcron.db\nwallet:\n  keypair: keys/k.json\n"
                      "plans:\n  dir: plans\n")  # fmt: skip
    write_keypair_file(site / "keys" / "k.json")
    (site / "plans" / "p.yaml").write_text(json.dumps(swap_plan("p", {"every": "1d"})))
    before = files_under(site)
    done = run_in(elsewhere, config, *args)
    assert done.returncode == (78 if args == ("run",) else 1), done.stdout  # run: EXIT_FATAL
    expected = f"no database at {site.resolve() / 'jupcron.db'}: check database.url"
    assert expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert files_under(site) == before
    assert files_under(elsewhere) == []


def test_db_current_on_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    config = tmp_path / "jupcron.yaml"
    config.write_text("database:\n  url: sqlite:///jupcron.db\n")
    done = jupcron("--config", str(config), "db", "current")
    assert done.returncode == 0, done.stderr
    assert "current: none" in done.stdout
    assert f"no database at {tmp_path.resolve() / 'jupcron.db'}" in done.stdout
    assert files_under(tmp_path) == ["jupcron.yaml"]


def test_db_upgrade_names_the_absolute_folder_it_tried(tmp_path: Path) -> None:
    config = tmp_path / "jupcron.yaml"
    config.write_text("database:\n  url: sqlite:///state/jupcron.db\n")
    done = run_in(Path("/"), config, "db", "upgrade")
    assert done.returncode == 1
    folder = tmp_path.resolve() / "state"
    assert done.stderr.strip() == (
        f"error: cannot create the database {folder / 'jupcron.db'}: "
        f"its folder {folder} does not exist"
    )
