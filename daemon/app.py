"""Assembling the pieces from the config: store, API client, wallet, runner.

Commands and the daemon build what they need here, so there is one way to
get from a config file to a working runner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import structlog
from sqlalchemy.exc import SQLAlchemyError

from jupcron.api.client import JupiterClient
from jupcron.chain.rpc import SolanaRpc, rpc_from_config
from jupcron.chain.wallet import Wallet
from jupcron.chain.wallets import load_wallets
from jupcron.config import Config, api_key
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import JupcronError
from jupcron.runner.core import Runner
from jupcron.runner.outcome import RunListener
from jupcron.store import plans as store_plans
from jupcron.store.handle import Store, open_store
from jupcron.store.ratebudget import shared_budgets
from jupcron.store.runstore import SqlRunStore

log = structlog.get_logger(__name__)


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
