"""Command-line values checked where they are read: a bad one is a usage error (exit
2) before any file, store or API is touched."""

from __future__ import annotations

import os
from collections.abc import Callable

import click
from solders.pubkey import Pubkey

from jupcron.config.wallets import WALLET_NAME, WALLET_NAME_RULE
from jupcron.plans.fields import mint_address


def pubkey(ctx: click.Context, param: click.Parameter, value: str | None) -> Pubkey | None:
    """A base58 public key (an option's or an argument's callback); None stays None."""
    if value is None:
        return None
    try:
        return Pubkey.from_string(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a base58 public key") from None


EMPTY = 'is empty (an unset variable in "$VAR"?)'


def not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A name (an option's callback) that is not empty: ``""`` is a script's ``"$VAR"``
    with VAR unset, and read as no name at all it changed the command's meaning
    (`tx inspect --plan ""` judged the transaction without the plan's terms)."""
    if value is not None and not value.strip():
        raise click.BadParameter(EMPTY)
    return value


class GivenPath(click.Path):
    """`click.Path` that refuses an empty path: ``""`` became ``.``, the folder the
    command runs in (`plans apply "$FILE"` with FILE unset stored and scheduled every
    plan file there; `wallet new ""`, `--chart ""` named the folder)."""

    def convert(
        self, value: str | os.PathLike[str], param: click.Parameter | None,
        ctx: click.Context | None,
    ) -> str | bytes | os.PathLike[str]:  # fmt: skip
        if isinstance(value, str) and not value.strip():
            self.fail(EMPTY, param, ctx)
        return super().convert(value, param, ctx)


def mints(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Mint addresses (a repeated option's callback), each matched exactly where it is
    used: a symbol (``USDC``) or a mistyped or truncated address is refused with the
    address meant (`mint_address`), never silently matched to nothing."""
    try:
        return tuple(mint_address(value) for value in values)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def wallet_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A wallet's name (`WALLET_NAME`); None stays None. An empty one is refused, never
    read as "none given": it is a script's ``--name "$W"`` with W unset, and the default
    wallet's address (or every wallet's runs) is not what the script meant; a name no
    wallet can have matches nothing, and an empty answer reads as "no runs"."""
    if value is None:
        return None
    if not WALLET_NAME.fullmatch(value):
        raise click.BadParameter(
            f"{value!r} is no wallet name: a wallet name is {WALLET_NAME_RULE}"
        )
    return value


TextCheck = Callable[[click.Context, click.Parameter, str | None], str | None]


def up_to(length: int) -> TextCheck:
    """An option's callback: free text that lands in a VARCHAR(`length`) column, refused
    when longer. SQLite keeps any length there and PostgreSQL refuses it, so without
    this the same command succeeded on one backend and failed on the other with the
    database's own error, after the config and the store were opened."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None and len(value) > length:
            raise click.BadParameter(
                f"is {len(value)} characters long: the store keeps at most {length}"
            )
        return value

    return check
