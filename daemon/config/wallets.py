"""The wallets of the config (docs/wallets.md): ``wallet.keypair``, the default wallet
named ``default``, and ``wallets:``, more of them by name; the rules that make a set
of them one clear thing (a name is one key, ``default`` is wallet.keypair's)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jupcron.config.fields import Section
from jupcron.domain import DEFAULT_WALLET


class WalletConfig(Section):
    """``wallet:``, the default wallet (named ``default``): its keypair file, else the
    systemd credential ``keypair`` (only when no ``wallets:`` are configured)."""

    keypair: Path | None = None


# a wallet's name (a key of ``wallets:``, a plan's ``wallet:``)
WALLET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
WALLET_NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


class NamedWalletConfig(Section):
    """One entry of ``wallets:``: a wallet besides the default one."""

    keypair: Path


def has_default(default: WalletConfig, named: Mapping[str, Any]) -> bool:
    """Whether there is a wallet named ``default``: ``wallet.keypair`` is set, or no
    ``wallets:`` are (then it is the systemd credential ``keypair``, as before there
    were several wallets). With only ``wallets:``, every plan must name its wallet."""
    return default.keypair is not None or not named


def known_wallets(default: WalletConfig, named: Mapping[str, Any]) -> tuple[str, ...]:
    """Every wallet's name: ``default`` first (when there is one), then the named ones."""
    names = tuple(sorted(named))
    return (DEFAULT_WALLET, *names) if has_default(default, named) else names


def wallet_entries(value: Any) -> Any:
    """``wallets:`` before its entries are parsed: each one a mapping."""
    if isinstance(value, dict):
        for name, entry in value.items():
            if not isinstance(entry, dict):
                raise ValueError(
                    f"wallets.{name} must be a mapping {{keypair: PATH}} (one wallet "
                    "by name; the default wallet's keypair is wallet.keypair)"
                )
    return value


def check_wallets(
    value: dict[str, NamedWalletConfig], default: Any
) -> dict[str, NamedWalletConfig]:
    """``wallets:``: no entry named ``default``, names by `WALLET_NAME`, and no keypair
    file under two names (``wallet.keypair`` counted)."""
    seen: dict[Path, str] = {}
    if isinstance(default, WalletConfig) and default.keypair is not None:
        seen[default.keypair] = "wallet.keypair"
    for name, entry in value.items():
        if name == DEFAULT_WALLET:
            raise ValueError(
                f"'{DEFAULT_WALLET}' is the name of wallet.keypair's wallet: give this "
                f"one another name, or set its keypair as wallet.keypair"
            )
        if not WALLET_NAME.fullmatch(name):
            raise ValueError(f"wallet name '{name}' must be {WALLET_NAME_RULE}")
        earlier = seen.get(entry.keypair)
        if earlier is not None:
            raise ValueError(
                f"wallets.{name}: its keypair file {entry.keypair} is {earlier}'s "
                "already: one key, one wallet name"
            )
        seen[entry.keypair] = f"wallets.{name}"
    return value


def unknown_wallet(name: str, known: Sequence[str]) -> str:
    """The message for a wallet name the config does not have."""
    have = ", ".join(known) or "none"
    if name == DEFAULT_WALLET:
        return (
            f"no default wallet: the config sets wallets: but not wallet.keypair, so a plan "
            f"must name its wallet (wallet: NAME; configured: {have})"
        )
    return f"unknown wallet '{name}': the config has {have} (add it under wallets:)"


def not_loaded(name: str, loaded: Sequence[str]) -> str:
    """The message for a wallet the config has (under ``wallets:``) that a running
    daemon did not load: it reads its wallets' keys at start only, so adding the wallet
    was right, and a restart is what is left (`unknown_wallet` said to add it)."""
    have = ", ".join(loaded) or "none"
    return (
        f"wallet '{name}' is in the config, but this daemon loaded its wallets' keys at "
        f"start ({have}): restart it to use this one"
    )
