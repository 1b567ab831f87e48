"""`jupcron db` and the schema's revision, as an operator meets them (review 17):
a database a newer jupcron migrated is named so (not "run 'jupcron db upgrade'",
which cannot help); an unknown revision creates no database file; an upgrade to a
revision the database is past says where it really is."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, text

from jupcron.store import migrate
from tests.e2e.cli import jupcron

FUTURE = "0099_from_a_newer_jupcron"


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text(f'database:\n  url: "{url}"\n')
    return path


def _set_revision(url: str, revision: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    engine.dispose()


def _revision(url: str) -> str:
    engine = create_engine(url)
    with engine.connect() as conn:
        found = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    engine.dispose()
    return str(found)


def test_a_database_from_a_newer_jupcron_is_named_so(tmp_path: Path, db_url: str) -> None:
    _set_revision(db_url, FUTURE)
    config = _config(tmp_path, db_url)
    for command in (["status"], ["db", "upgrade"], ["pause", "--all"]):
        result = jupcron("--config", str(config), *command)
        assert result.returncode == 1, (command, result)
        assert "newer jupcron" in result.stderr, (command, result.stderr)
        assert "run 'jupcron db upgrade'" not in result.stderr, (command, result.stderr)
        assert "Can't locate" not in result.stderr, (command, result.stderr)
    current = jupcron("--config", str(config), "db", "current")
    assert current.returncode == 0, current.stderr
    assert "newer than this jupcron" in current.stdout, current.stdout
    assert "needs 'jupcron db upgrade'" not in current.stdout
    assert _revision(db_url) == FUTURE


def test_an_unknown_revision_creates_no_database_file(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    config = _config(tmp_path, f"sqlite:///{folder / 'jupcron.db'}")
    result = jupcron("--config", str(config), "db", "upgrade", "--revision", "0002_nope")
    assert result.returncode == 1, result
    assert result.stderr.startswith("error: cannot migrate to revision '0002_nope'")
    assert list(folder.iterdir()) == []
    later = jupcron("--config", str(config), "status")
    assert "no database at" in later.stderr, later.stderr


def test_an_upgrade_to_a_revision_already_passed_says_where_the_database_is(
    tmp_path: Path, db_url: str
) -> None:
    config = _config(tmp_path, db_url)
    result = jupcron("--config", str(config), "db", "upgrade", "--revision", "0003_fills")
    assert result.returncode == 0, result.stderr
    assert "is at revision 0003_fills" not in result.stdout, result.stdout
    assert f"is at revision {migrate.HEAD}" in result.stdout, result.stdout
    assert _revision(db_url) == migrate.HEAD


def test_an_upgrade_says_the_revision_it_reached(tmp_path: Path, empty_db_url: str) -> None:
    config = _config(tmp_path, empty_db_url)
    result = jupcron("--config", str(config), "db", "upgrade", "--revision", "0003")
    assert result.returncode == 0, result.stderr
    assert "is at revision 0003_fills" in result.stdout, result.stdout
    head = jupcron("--config", str(config), "db", "upgrade")
    assert f"is at revision {migrate.HEAD}" in head.stdout, head.stdout
