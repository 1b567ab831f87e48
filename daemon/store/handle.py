"""The configured database opened for a command or the daemon: an engine and its
session factory, refused when it is not migrated to head. Kept apart from
`jupcron.app` so that commands reading or writing only the store (audit, pause,
report, settle's look-ups) do not import the runner, the API client and the wallet."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from jupcron.config import Config
from jupcron.store import migrate
from jupcron.store.engine import open_existing, session_factory


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
