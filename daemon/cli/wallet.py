"""`jupcron wallet`: the configured keypair's public key; a new keypair file."""

from __future__ import annotations

import os
from pathlib import Path

import click

from jupcron.chain.wallet import Wallet, load_wallet, write_keypair_file
from jupcron.cli.main import Context, pass_ctx
from jupcron.config import DEFAULT_PATH, Config


def config_or_defaults(ctx: Context) -> Config:
    """The config; built-in defaults when none was asked for and none is installed."""
    if ctx.config_path is None and not DEFAULT_PATH.exists():
        return Config()
    return ctx.config


def configured_wallet(ctx: Context, keypair: Path | None = None) -> Wallet:
    """``keypair`` if given, else ``wallet.keypair``, else the systemd credential."""
    if keypair is None:
        keypair = config_or_defaults(ctx).wallet.keypair
    return load_wallet(keypair, os.environ)


@click.group()
def wallet() -> None:
    """The signing keypair (Solana CLI JSON file)."""


@wallet.command()
@click.option(
    "--keypair",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Keypair file (default: wallet.keypair, else $CREDENTIALS_DIRECTORY/keypair).",
)
@pass_ctx
def show(ctx: Context, keypair: Path | None) -> None:
    """Print the public key of the configured keypair."""
    click.echo(configured_wallet(ctx, keypair).address)


@wallet.command()
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
def new(path: Path) -> None:
    """Write a new keypair to PATH (mode 0600; never overwrites) and print its public key."""
    created = write_keypair_file(path)
    click.echo(created.address)
    click.echo(f"wrote a new keypair to {path} (mode 0600)", err=True)
