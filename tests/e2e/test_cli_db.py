"""`jupcron db upgrade/current` on a new SQLite file and on PostgreSQL."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.cli import jupcron


def config_for(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text(f"database:\n  url: {url}\n")
    return path


def test_db_upgrade_creates_the_schema_on_a_new_sqlite_file(tmp_path: Path) -> None:
    db = tmp_path / "state" / "jupcron.db"
    db.parent.mkdir()
    config = config_for(tmp_path, f"sqlite:///{db}")
    before = jupcron("--config", str(config), "db", "current")
    assert before.returncode == 0, before.stderr
    assert "current: none" in before.stdout
    assert not db.exists()  # a read-only command creates no database file
    done = jupcron("--config", str(config), "db", "upgrade")
    assert done.returncode == 0, done.stderr
    after = jupcron("--config", str(config), "db", "current")
    assert "up to date" in after.stdout
    if shutil.which("sqlite3"):
        out = subprocess.run(
            ["sqlite3", "-header", str(db), "select * from audit"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert "plan_name|kind|" in out.stdout or out.stdout == ""


def test_db_upgrade_on_postgresql(tmp_path: Path, pg_empty_url: str) -> None:
    config = config_for(tmp_path, pg_empty_url)
    done = jupcron("--config", str(config), "db", "upgrade")
    assert done.returncode == 0, done.stderr
    after = jupcron("--config", str(config), "db", "current")
    assert "up to date" in after.stdout, after.stdout + after.stderr


def test_config_from_the_environment(tmp_path: Path) -> None:
    config = config_for(tmp_path, f"sqlite:///{tmp_path / 'x.db'}")
    done = jupcron("db", "upgrade", env={"JUPCRON_CONFIG": str(config)})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "x.db").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("database:\n  urll: sqlite:///x.db\n", ":2:3: unknown key 'database.urll'"),
        (
            "database:\n  url: sqlite:////nonexistent/dir/x.db\n",
            "its folder /nonexistent/dir does not exist",
        ),
        ("database:\n  url: mysql://x\n", "database.url: must be a sqlite"),
    ],
)
def test_user_errors_are_one_line_without_traceback(
    tmp_path: Path, text: str, expected: str
) -> None:
    config = tmp_path / "jupcron.yaml"
    config.write_text(text)
    done = jupcron("--config", str(config), "db", "upgrade")
    assert done.returncode == 1
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    done = jupcron("--config", str(tmp_path / "missing.yaml"), "--debug", "db", "current")
    assert done.returncode != 0
    assert "Traceback" in done.stderr
    assert "ConfigError" in done.stderr


def test_a_missing_config_file_is_named(tmp_path: Path) -> None:
    done = jupcron("--config", str(tmp_path / "missing.yaml"), "db", "current")
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {tmp_path / 'missing.yaml'}: no such file"
