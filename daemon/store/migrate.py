"""Alembic, driven from code: upgrade, downgrade, current, and the head check."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError, ProgrammingError

import migrations
from daemon.config import mask_url
from daemon.errors import StoreError

SCRIPT_LOCATION = str(Path(migrations.__file__).parent)


def alembic_config(url: str) -> AlembicConfig:
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    try:
        command.upgrade(alembic_config(url), revision)
    except OperationalError as exc:
        raise StoreError(f"cannot migrate {mask_url(url)}: {exc.orig or exc}") from exc


def downgrade(url: str, revision: str = "base") -> None:
    try:
        command.downgrade(alembic_config(url), revision)
    except OperationalError as exc:
        raise StoreError(f"cannot migrate {mask_url(url)}: {exc.orig or exc}") from exc


def head() -> str:
    script = ScriptDirectory(SCRIPT_LOCATION)
    found = script.get_current_head()
    assert found is not None
    return found


def current(engine: Engine) -> str | None:
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except (OperationalError, ProgrammingError) as exc:
        raise StoreError(f"cannot read the database: {exc.orig or exc}") from exc


def require_head(engine: Engine) -> None:
    """Refuse to work on a database that is not migrated to this code's head."""
    found = current(engine)
    wanted = head()
    if found != wanted:
        raise StoreError(
            f"database is at revision {found or 'none'}, this jupcron needs {wanted}: "
            "run 'jupcron db upgrade'"
        )
