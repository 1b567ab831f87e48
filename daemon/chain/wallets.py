"""Every configured wallet, loaded and checked (`load_wallets`), and how their
addresses are said in one line. Apart from `jupcron.app`: `jupcron config check`
loads the wallets without importing the runner."""

from __future__ import annotations

from collections.abc import Mapping

from jupcron.chain.wallet import Wallet, load_wallet
from jupcron.config import Config
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import KeypairError


def load_wallets(config: Config, env: Mapping[str, str] | None = None) -> dict[str, Wallet]:
    """Every configured wallet by name (`Config.wallet_names`), each keypair file
    checked (`load_wallet`: unreadable, open to others, not a keypair: `KeypairError`
    naming the wallet); two names holding one key are refused too."""
    wallets: dict[str, Wallet] = {}
    by_address: dict[str, str] = {}
    for name in config.wallet_names():
        try:
            wallet = load_wallet(config.wallet_keypair(name), env)
        except KeypairError as exc:
            if name == DEFAULT_WALLET:
                raise
            raise KeypairError(f"wallet '{name}': {exc}") from None
        earlier = by_address.get(wallet.address)
        if earlier is not None:
            raise KeypairError(
                f"wallets '{earlier}' and '{name}' hold the same key ({wallet.address}): "
                "one key, one wallet name"
            )
        by_address[wallet.address] = name
        wallets[name] = wallet
    return wallets


def addresses_text(addresses: Mapping[str, str]) -> str:
    """``ADDRESS`` of the one default wallet, else ``NAME ADDRESS, …``."""
    if list(addresses) == [DEFAULT_WALLET]:
        return addresses[DEFAULT_WALLET]
    return ", ".join(f"{name} {address}" for name, address in addresses.items())


def wallets_text(addresses: Mapping[str, str]) -> str:
    """``wallet ADDRESS`` for the one default wallet, else ``wallets NAME ADDRESS, …``."""
    one = list(addresses) == [DEFAULT_WALLET]
    return f"{'wallet' if one else 'wallets'} {addresses_text(addresses)}"
