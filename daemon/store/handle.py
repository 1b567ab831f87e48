"""The configured database opened for a command or the daemon: an engine and its
session factory, refused when it is not migrated to head. Kept apart from
`jupcron.app` so that commands reading or writing only the store (audit, pause,
report, settle's look-ups) do not import the runner, the API client and the wallet."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from jupcron.config import Config
from jupcron.store import migrate
from jupcron.store.engine import open_existing, open_reader, session_factory


@dataclass
class Store:
    engine: Engine
    factory: sessionmaker[Session]

    def close(self) -> None:
        self.engine.dispose()


def open_store(config: Config, *, check_head: bool = True) -> Store:
    """The configured database, refusing one that is not migrated to head. It must
    exist: only `jupcron db upgrade` creates a SQLite file (see `open_existing`)."""
    engine = open_existing(config.database.url)
    try:
        if check_head:
            migrate.require_head(engine)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine, session_factory(engine))


@contextmanager
def reading(url: str) -> Iterator[Engine]:
    """The database for a command that only reads (status, audit, report, plans list):
    an engine that cannot write and, on SQLite, takes no write lock (`open_reader`), so
    it neither waits for a running daemon's writes nor holds them up; refused when not
    migrated to head; disposed after."""
    engine = open_reader(url)
    try:
        migrate.require_head(engine)
        yield engine
    finally:
        engine.dispose()
