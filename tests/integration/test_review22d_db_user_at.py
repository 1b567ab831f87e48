"""Review 22d: a database user name holding '@' (Azure Database for PostgreSQL's
``user@server``) and the password after it.

SQLAlchemy reads ``postgresql+psycopg://jc@tenant:PASSWORD@host/db`` as the user
``jc@tenant`` and the password ``PASSWORD`` (its user name runs to the first ':',
'@' included), and connects. `mask_url` took the user to end at the first '@',
found no password, and showed the rest as it was: the password, in clear, in
``jupcron db upgrade``'s line, the daemon's ``daemon_started`` line, ``config
check``. Real PostgreSQL (the session's cluster, a role of that name), the real
command.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from jupcron.urls import MASK, mask_url
from tests.e2e.cli import jupcron
from tests.support.pgcluster import PgCluster

ROLE = "jc@tenant-r22d"
PASSWORD = "Pw-after-an-at-4d7e1b"


@pytest.fixture
def at_role(pg_cluster: PgCluster) -> Iterator[str]:
    pg_cluster.execute(f"CREATE ROLE \"{ROLE}\" LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
    try:
        yield ROLE
    finally:
        pg_cluster.execute(f'DROP ROLE IF EXISTS "{ROLE}"')


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql+psycopg://{ROLE}:{PASSWORD}@db.example:5432/jupcron",
        f"postgresql+psycopg://a@b@c:{PASSWORD}@db.example/jupcron",
        f"postgresql+psycopg://plain:{PASSWORD}@db.example/jupcron",
        f"postgresql+psycopg://plain:{PASSWORD}@db.example/jupcron?sslmode=require",
    ],
)
def test_mask_url_hides_the_password_sqlalchemy_reads(url: str) -> None:
    assert make_url(url).password == PASSWORD  # what the connection will send
    shown = mask_url(url)
    assert PASSWORD not in shown, shown
    assert f":{MASK}@db.example" in shown


def test_a_user_without_password_and_a_port_are_shown_as_they_are() -> None:
    url = "postgresql+psycopg://jc@db.example:5432/jupcron"
    assert make_url(url).password is None
    assert mask_url(url) == url


def test_db_upgrade_with_an_at_in_the_user_name_works_and_shows_no_password(
    tmp_path: Path, pg_url: str, at_role: str
) -> None:
    scheme, rest = pg_url.split("://", 1)
    host = rest.split("@", 1)[1]
    url = f"{scheme}://{at_role}:{PASSWORD}@{host}"
    config = tmp_path / "jupcron.yaml"
    config.write_text(f'database:\n  url: "{url}"\n')
    result = jupcron("--config", str(config), "db", "upgrade")
    assert result.returncode == 0, result.stderr  # it connected, as that user
    assert f"{at_role}:{MASK}@" in result.stdout, result.stdout
    assert PASSWORD not in result.stdout + result.stderr, result.stdout
