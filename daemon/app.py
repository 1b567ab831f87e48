"""Assembling the pieces from the config: store, API client, wallet, runner.

Commands and the daemon build what they need here, so there is one way to
get from a config file to a working runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from jupcron.api.client import JupiterClient
from jupcron.chain.rpc import SolanaRpc, rpc_from_config
from jupcron.chain.wallet import Wallet, load_wallet
from jupcron.config import Config, api_key
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import JupcronError, KeypairError
from jupcron.runner.core import Runner
from jupcron.runner.outcome import RunListener
from jupcron.store import migrate
from jupcron.store import plans as store_plans
from jupcron.store.engine import open_existing, session_factory
from jupcron.store.ratebudget import shared_budgets
from jupcron.store.runstore import SqlRunStore

log = structlog.get_logger(__name__)


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


@dataclass
class Runtime:
    config: Config
    store: Store
    api: JupiterClient
    wallets: dict[str, Wallet]  # every configured wallet, by name
    runner: Runner
    runs: SqlRunStore  # the one way a run is written (the runner's, the scheduler's)
    rpc: SolanaRpc | None = None

    @property
    def wallet(self) -> Wallet:
        """The default wallet (with only named wallets: the first by name)."""
        return self.wallets.get(DEFAULT_WALLET) or self.wallets[min(self.wallets)]

    def addresses(self) -> dict[str, str]:
        """Every wallet's address, by name."""
        return {name: wallet.address for name, wallet in self.wallets.items()}

    def warn_unknown_wallets(self) -> list[str]:
        """The wallets enabled plans name that this runtime did not load (a config that
        dropped one since `plans apply`): logged, as each of their runs is rejected."""
        try:
            with self.store.factory() as session:
                used = store_plans.wallets_in_use(session)
        except (JupcronError, SQLAlchemyError):
            return []  # the store's trouble is reported where it is used
        missing = sorted(used - set(self.wallets))
        if missing:
            log.error("plans_wallet_unknown", wallets=missing, loaded=sorted(self.wallets),
                      fix="name them under wallets: and restart, or move the plans")  # fmt: skip
        return missing

    def close(self) -> None:
        self.api.close()
        if self.rpc is not None:
            self.rpc.close()
        self.store.close()


def build_runtime(
    config: Config,
    *,
    transport: httpx.BaseTransport | None = None,
    listeners: Sequence[RunListener] = (),
    store: Store | None = None,
    on_attempt: Callable[[Any], None] | None = None,
) -> Runtime:
    """Everything a run needs; fails early (before any order) on a bad key or keypair."""
    wallets = load_wallets(config)
    key = api_key(config)
    store = store or open_store(config)
    api = JupiterClient.from_config(
        config, key, transport=transport, budget_for=shared_budgets(store.engine, key)
    )
    rpc = rpc_from_config(config.rpc)
    runs = SqlRunStore(store.engine, group_commit=config.runner.group_commit)
    runner = Runner(
        store=runs, api=api, wallets=wallets, config=config, rpc=rpc, listeners=listeners,
        on_attempt=on_attempt,
    )  # fmt: skip
    return Runtime(
        config=config,
        store=store,
        api=api,
        wallets=wallets,
        runner=runner,
        runs=runs,
        rpc=rpc,
    )
