"""Alembic, driven from code: upgrade, downgrade, current, and the head check.

The daemon only checks that the database is at `HEAD` when it starts, with
one query; Alembic itself (11 MB resident) is imported only to migrate.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, func, select, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from jupcron.config import mask_url
from jupcron.errors import ConfigError, StoreBusyError, StoreError

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

# the Alembic environment ships as the package `jupcron.migrations` (folder migrations/)
SCRIPT_LOCATION = str(resources.files("jupcron.migrations"))
# the newest revision in migrations/versions; a test keeps it equal to Alembic's head
HEAD = "0015_run_owner_by_signing"
# the PostgreSQL advisory lock `upgrade` holds (a signed 64-bit key, as the daemon's
# per-wallet ones are made, from a name of its own)
MIGRATE_LOCK = int.from_bytes(hashlib.sha256(b"jupcron-migrate").digest()[:8], "big", signed=True)


def alembic_config(url: str) -> AlembicConfig:
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> str | None:
    """Migrate the database at `url` up to `revision`; the revision id it named
    (None for ``base``), so a caller can say when the database was past it already."""
    from alembic import command
    from alembic.util import CommandError

    if not revision.strip():
        raise ConfigError("give a revision (e.g. head): an empty one names nothing")
    wanted = _absolute(url, revision)  # an unknown one is refused before the database is touched
    try:
        with _one_at_a_time(url) as connection:
            cfg = alembic_config(url)
            cfg.attributes["connection"] = connection  # None: env.py opens its own
            command.upgrade(cfg, wanted or revision)
    except OperationalError as exc:
        raise StoreError(f"cannot migrate {mask_url(url)}: {exc.orig or exc}") from exc
    except CommandError as exc:  # the database's own revision unknown, or a bad relative one
        found = _current_of(url)
        if found is not None and not is_known(found):
            raise StoreError(_unknown(found)) from None
        raise _bad_target(revision, exc) from None
    return wanted


# Alembic's relative form: ``[REV]+N`` or ``[REV]-N`` (no REV: from the database's own)
_RELATIVE = re.compile(r"(?P<base>[^+-]*)(?P<step>[+-]\d+)")


def _absolute(url: str, revision: str) -> str | None:
    """The revision id `revision` names, a relative one resolved here on the (linear)
    list of migrations: Alembic asserts on a step past the newest one (``head+1``:
    "unexpected AssertionError" and no text) and reports others only after it has
    opened, and so created, the database file. Reads the database's revision only for
    ``+N``/``-N``, and never creates it."""
    relative = _RELATIVE.fullmatch(revision.strip())
    if relative is None:
        return target(revision)
    base = relative["base"]
    if base:
        start = None if base == "base" else _named(base, revision)
    else:
        start = _current_of(url)
        if start is not None and not is_known(start):
            raise StoreError(_unknown(start))
    known = revisions()
    at = known.index(start) if start is not None else -1  # base: before the first
    step = at + int(relative["step"])
    if not 0 <= step < len(known):
        where = f"the database's revision {start or 'none'}" if not base else repr(base)
        raise _bad_target(
            revision, ValueError(f"{relative['step']} from {where} names no migration")
        )
    return known[step]


def _named(base: str, revision: str) -> str | None:
    """The id `base` (the start of the relative `revision`) names; an error quotes
    all of `revision`."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    try:
        found = ScriptDirectory(SCRIPT_LOCATION).get_revisions(base)
    except CommandError as exc:
        raise _bad_target(revision, exc) from None
    return str(found[0].revision) if len(found) == 1 else None


@contextmanager
def _one_at_a_time(url: str) -> Iterator[Connection | None]:
    """On PostgreSQL, a connection holding the migrations' advisory lock: a second
    `db upgrade` at the same time waits for the first to commit, then reads the
    revision it left (nothing to do), instead of running the same migrations beside
    it and failing on the first one's work (its transaction rolled back, exit 1 with
    ``column "owner" of relation "runs" already exists``, a duplicate key in pg_type,
    or Alembic's version row not found). SQLite needs none: a migration's transaction
    begins IMMEDIATE, which already takes the file's write lock before it reads."""
    from jupcron.store.engine import make_engine

    engine = make_engine(url, bounded_locks=False)  # waits for another upgrade
    try:
        if engine.dialect.name != "postgresql":
            yield None
            return
        with engine.connect() as conn:
            conn.execute(select(func.pg_advisory_lock(MIGRATE_LOCK)))
            conn.commit()  # the session holds the lock; Alembic begins its own transaction
            yield conn
            # unlocked when the connection goes (dispose below closes it), even after
            # an error that left it unusable
    finally:
        engine.dispose()


def _current_of(url: str) -> str | None:
    """The revision of the database at `url`; None if it has none (or no file yet)."""
    from jupcron.store.engine import make_engine, sqlite_file

    file = sqlite_file(url)
    if file is not None and not file.is_file():
        return None
    engine = make_engine(url)
    try:
        return current(engine)
    finally:
        engine.dispose()


def _bad_target(revision: str, exc: Exception) -> ConfigError:
    return ConfigError(
        f"cannot migrate to revision {revision!r}: {exc} (known: 'head', or one of "
        f"{', '.join(revisions())})"
    )


def target(revision: str) -> str | None:
    """The revision id `revision` names (``head``, an id or its unique start); None
    for ``base``. An unknown one (a relative one too: see `_absolute`) is a
    `ConfigError`."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    try:
        found = ScriptDirectory(SCRIPT_LOCATION).get_revisions(revision)
    except CommandError as exc:
        raise _bad_target(revision, exc) from None
    return str(found[0].revision) if len(found) == 1 else None


def _unknown(found: str) -> str:
    return (
        f"database is at revision {found}, which this jupcron ({HEAD}) does not know: "
        "a newer jupcron migrated it: run that version (this one cannot migrate it back)"
    )


def revisions() -> list[str]:
    """Every revision id, oldest first."""
    from alembic.script import ScriptDirectory

    walked = ScriptDirectory(SCRIPT_LOCATION).walk_revisions()
    return [script.revision for script in reversed(list(walked))]


def downgrade(url: str, revision: str = "base") -> None:
    from alembic import command

    try:
        command.downgrade(alembic_config(url), revision)
    except OperationalError as exc:
        raise StoreError(f"cannot migrate {mask_url(url)}: {exc.orig or exc}") from exc


def head() -> str:
    """Alembic's head revision, read from the migration scripts."""
    from alembic.script import ScriptDirectory

    found = ScriptDirectory(SCRIPT_LOCATION).get_current_head()
    assert found is not None
    return found


def current(engine: Engine) -> str | None:
    """The database's revision (``None`` if it was never migrated)."""
    try:
        with engine.connect() as conn:
            if not engine.dialect.has_table(conn, "alembic_version"):
                return None
            versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars()
            found = list(versions)
    except OperationalError as exc:  # cannot connect (yet): a daemon waits, a command says so
        raise StoreBusyError(f"cannot reach the database: {exc.orig or exc}") from exc
    except ProgrammingError as exc:
        raise StoreError(f"cannot read the database: {exc.orig or exc}") from exc
    if len(found) > 1:
        raise StoreError(f"the database has several Alembic heads: {', '.join(sorted(found))}")
    return found[0] if found else None


def require_head(engine: Engine) -> None:
    """Refuse to work on a database that is not migrated to this code's head."""
    found = current(engine)
    wanted = HEAD
    if found != wanted:
        if found is not None and not is_known(found):  # Alembic is read only here
            raise StoreError(_unknown(found))
        raise StoreError(
            f"database is at revision {found or 'none'}, this jupcron needs {wanted}: "
            "run 'jupcron db upgrade'"
        )


def is_known(revision: str) -> bool:
    """Whether `revision` is one of this jupcron's migrations."""
    return revision in revisions()
