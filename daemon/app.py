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
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from jupcron.api.client import JupiterClient
from jupcron.chain.rpc import SolanaRpc, rpc_from_config
from jupcron.chain.wallet import Wallet, load_wallet
from jupcron.config import Config, api_key
from jupcron.runner.core import Runner
from jupcron.runner.outcome import RunListener
from jupcron.store import migrate
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


@dataclass
class Runtime:
    config: Config
    store: Store
    api: JupiterClient
    wallet: Wallet
    runner: Runner
    runs: SqlRunStore  # the one way a run is written (the runner's, the scheduler's)
    rpc: SolanaRpc | None = None

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
    wallet = load_wallet(config.wallet.keypair)
    key = api_key(config)
    store = store or open_store(config)
    api = JupiterClient.from_config(
        config, key, transport=transport, budget_for=shared_budgets(store.engine, key)
    )
    rpc = rpc_from_config(config.rpc)
    runs = SqlRunStore(store.engine, group_commit=config.runner.group_commit)
    runner = Runner(
        store=runs, api=api, wallet=wallet, config=config, rpc=rpc, listeners=listeners,
        on_attempt=on_attempt,
    )  # fmt: skip
    return Runtime(
        config=config,
        store=store,
        api=api,
        wallet=wallet,
        runner=runner,
        runs=runs,
        rpc=rpc,
    )
