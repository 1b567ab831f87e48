"""Alembic environment: runs online against the URL jupcron gives it."""

from __future__ import annotations

from alembic import context

from jupcron.store.engine import make_engine
from jupcron.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    # a migration's DDL waits for the daemons' locks as long as it takes (the docs say
    # to stop them first), as `db upgrade` waits for another upgrade
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "", bounded_locks=False)
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


def _run(connection: object) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("jupcron migrations run online only")
run_migrations_online()
