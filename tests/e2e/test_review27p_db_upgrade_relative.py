"""`jupcron db upgrade --revision head+1` (a step past the newest migration) ended
with ``error: unexpected AssertionError:`` and no text: Alembic asserts while it walks
the revisions. A relative revision is now resolved against the migrations (and, for
``+N``/``-N``, the database's own revision) before anything is opened, so any that
names no migration is a usage error that writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import jupcron


def config_for(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "jupcron.db"
    path = tmp_path / "jupcron.yaml"
    path.write_text(f"database:\n  url: sqlite:///{db}\n")
    return path, db


@pytest.mark.parametrize(
    "revision", ["head+1", "0015_run_owner_by_signing+1", "-1", "0001-1", "head+-1", "x@head+1"]
)
def test_a_relative_revision_past_the_migrations_is_a_usage_error(
    tmp_path: Path, revision: str
) -> None:
    config, db = config_for(tmp_path)
    done = jupcron("--config", str(config), "db", "upgrade", "--revision", revision)
    assert done.returncode == 1
    assert "unexpected" not in done.stderr, done.stderr
    assert f"cannot migrate to revision {revision!r}" in done.stderr, done.stderr
    assert not db.exists()  # nothing written: not even an empty database file


def test_a_relative_revision_inside_the_migrations_still_works(tmp_path: Path) -> None:
    config, _ = config_for(tmp_path)
    done = jupcron("--config", str(config), "db", "upgrade", "--revision", "+2")
    assert done.returncode == 0, done.stderr
    assert "is at revision 0003_fills" in done.stdout
    done = jupcron("--config", str(config), "db", "upgrade", "--revision", "head-1")
    assert done.returncode == 0, done.stderr
    assert "is at revision 0014_run_owner_fill" in done.stdout
    done = jupcron("--config", str(config), "db", "upgrade", "--revision", "+1")
    assert done.returncode == 0, done.stderr
    assert "is at revision 0015_run_owner_by_signing" in done.stdout
    back = jupcron("--config", str(config), "db", "upgrade", "--revision", "-1")
    assert back.returncode == 0, back.stderr  # upgrade never goes back: it says so
    assert "not 0014_run_owner_fill" in back.stdout, back.stdout
