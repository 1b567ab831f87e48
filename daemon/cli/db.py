"""`jupcron db`: migrations."""

from __future__ import annotations

import click

from jupcron.cli.main import Context, pass_ctx
from jupcron.config import mask_url
from jupcron.store import migrate
from jupcron.store.engine import make_engine, open_existing, sqlite_file


@click.group()
def db() -> None:
    """Database schema: upgrade and current revision."""


@db.command()
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@pass_ctx
def upgrade(ctx: Context, revision: str) -> None:
    """Apply Alembic migrations to database.url."""
    url = ctx.config.database.url
    make_engine(url).dispose()  # checks the URL and the SQLite folder first
    wanted = migrate.upgrade(url, revision)
    engine = open_existing(url)
    try:
        found = migrate.current(engine)
    finally:
        engine.dispose()
    note = ""
    if wanted is not None and found != wanted:
        note = f" (not {wanted}: it was past that already, and upgrade never goes back)"
    click.echo(f"database {mask_url(url)} is at revision {found or 'none'}{note}")


@db.command()
@pass_ctx
def current(ctx: Context) -> None:
    """Show the database's revision and the one this jupcron needs."""
    url = ctx.config.database.url
    head = migrate.head()
    file = sqlite_file(url)
    if file is not None and not file.exists():  # read-only: never create the file
        state = f"no database at {file}: run 'jupcron db upgrade'"
        click.echo(f"current: none  head: {head}  ({state})")
        return
    engine = open_existing(url)
    try:
        found = migrate.current(engine)
    finally:
        engine.dispose()
    if found == head:
        state = "up to date"
    elif found is not None and not migrate.is_known(found):
        state = "newer than this jupcron: run the jupcron that migrated it"
    else:
        state = "needs 'jupcron db upgrade'"
    click.echo(f"current: {found or 'none'}  head: {head}  ({state})")
