"""`jupcron wallet`: the configured wallets' public keys; a new keypair file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from jupcron.chain.wallet import Wallet, load_wallet, write_keypair_file
from jupcron.cli import params
from jupcron.cli.main import Context, pass_ctx
from jupcron.config import DEFAULT_PATH, Config
from jupcron.domain import DEFAULT_WALLET


def config_or_defaults(ctx: Context) -> Config:
    """The config; built-in defaults when none was asked for and none is installed."""
    if ctx.config_path is None and not DEFAULT_PATH.exists():
        return Config()
    return ctx.config


def configured_wallet(
    ctx: Context, keypair: Path | None = None, name: str = DEFAULT_WALLET
) -> Wallet:
    """``keypair`` if given, else wallet `name`'s keypair (the default wallet's:
    ``wallet.keypair``, else the systemd credential)."""
    if keypair is None:
        keypair = config_or_defaults(ctx).wallet_keypair(name)
    return load_wallet(keypair, os.environ)


@click.group()
def wallet() -> None:
    """The signing keypair (Solana CLI JSON file)."""


@wallet.command()
@click.option(
    "--keypair",
    type=params.GivenPath(path_type=Path, dir_okay=False),
    help="Keypair file (default: the configured wallets).",
)
@click.option("--name", metavar="NAME", callback=params.wallet_name,
              help="Only this configured wallet: its public key.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format.")  # fmt: skip
@pass_ctx
def show(ctx: Context, keypair: Path | None, name: str | None, fmt: str) -> None:
    """Print the configured wallets' public keys: one wallet (only the default one,
    ``wallet.keypair`` or $CREDENTIALS_DIRECTORY/keypair) as its key alone; several
    as a NAME ADDRESS line each. With --name or --keypair: that one key (in JSON, one
    entry: the name null for a --keypair file)."""
    rows: list[tuple[str | None, str]]
    if keypair is not None or name is not None:
        one = None if keypair is not None else name
        rows = [(one, configured_wallet(ctx, keypair, name or DEFAULT_WALLET).address)]
        if fmt != "json":
            click.echo(rows[0][1])
            return
    else:
        config = config_or_defaults(ctx)
        rows = [(n, configured_wallet(ctx, None, n).address) for n in config.wallet_names()]
    if fmt == "json":
        click.echo(json.dumps([{"name": n, "address": a} for n, a in rows], indent=2))
    elif [n for n, _ in rows] == [DEFAULT_WALLET]:
        click.echo(rows[0][1])
    else:
        width = max(len(n or "") for n, _ in rows)
        for n, address in rows:
            click.echo(f"{n or '':<{width}}  {address}")


@wallet.command()
@click.argument("path", type=params.GivenPath(path_type=Path, dir_okay=False))
def new(path: Path) -> None:
    """Write a new keypair to PATH (mode 0600; never overwrites) and print its public key."""
    created = write_keypair_file(path)
    click.echo(created.address)
    click.echo(f"wrote a new keypair to {path} (mode 0600)", err=True)
