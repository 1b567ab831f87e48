"""Command-line values checked where they are read: a bad one is a usage error (exit
2) before any file, store or API is touched."""

from __future__ import annotations

import click
from solders.pubkey import Pubkey


def pubkey(ctx: click.Context, param: click.Parameter, value: str | None) -> Pubkey | None:
    """A base58 public key (an option's or an argument's callback); None stays None."""
    if value is None:
        return None
    try:
        return Pubkey.from_string(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a base58 public key") from None
