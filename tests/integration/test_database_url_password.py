"""A PostgreSQL password with special characters in database.url: written
percent-encoded it works; written as is, the command refuses it with one clear
line that says how to write it, quotes no part of the password and touches
nothing (review 17)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from tests.e2e.cli import jupcron

PASSWORD = "Sesame@Vault:Door/Key% 42"
# pieces of the password that a misread URL would put in the host, port or database
PIECES = ("Sesame", "Vault", "Door", "Key% 42")
# (the host is then 'Vault@127.0.0.1': a name lookup that failed would say so)
PASSWORDS = [PASSWORD, "Sesame@Vault"]


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "jupcron.yaml"
    path.write_text(f'database:\n  url: "{url}"\n')
    return path


def _with_password(pg_url: str, password: str) -> str:
    scheme, rest = pg_url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{password}@{host}"


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize(
    "command", [["db", "current"], ["db", "upgrade"], ["status"], ["pause", "--all"]]
)
def test_an_unencoded_at_in_the_password_is_refused_without_showing_it(
    tmp_path: Path, pg_url: str, command: list[str], password: str
) -> None:
    config = _config(tmp_path, _with_password(pg_url, password))
    result = jupcron("--config", str(config), *command)
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ")
    assert "%40" in result.stderr, result.stderr  # how to write it
    for piece in PIECES:
        assert piece not in result.stderr + result.stdout, result.stderr
    assert list(tmp_path.iterdir()) == [config]


def test_an_at_and_a_colon_that_read_as_a_port_are_refused_clearly(
    tmp_path: Path, pg_url: str
) -> None:
    # 'p@ss:word' leaves ':word' after the host: SQLAlchemy takes it for a port
    config = _config(tmp_path, _with_password(pg_url, "p@ss:wordsecret"))
    result = jupcron("--config", str(config), "status")
    assert result.returncode == 1, result
    assert "unexpected" not in result.stderr, result.stderr
    assert "wordsecret" not in result.stderr
    assert "%40" in result.stderr


def test_the_percent_encoded_password_works(tmp_path: Path, pg_url: str) -> None:
    config = _config(tmp_path, _with_password(pg_url, quote(PASSWORD, safe="")))
    result = jupcron("--config", str(config), "db", "current")
    assert result.returncode == 0, result.stderr
    assert "up to date" in result.stdout
