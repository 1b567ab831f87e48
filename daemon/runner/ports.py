"""What a run's steps work with: the store, the API, the wallet, the RPC node and
one clock, handed to plain functions as one value.

The steps (`order`, `sign`, `submit`, `settle`, `recovery`) are functions of
(ports, run, plan, now): they decide, the ports do the I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from daemon.api.trigger_v2 import TriggerV2Api
from daemon.config import Config
from daemon.rpc import SolanaRpc
from daemon.runner.book import RunBook
from daemon.runner.steps import OrderApi
from daemon.store.port import RunStore
from daemon.txguard import GuardPolicy
from daemon.wallet import Wallet

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class RunOptions:
    dry_run: bool = False
    trigger: str = "schedule"


@dataclass(frozen=True)
class Ports:
    store: RunStore
    book: RunBook
    api: OrderApi
    wallet: Wallet
    config: Config
    policy: GuardPolicy
    rpc: SolanaRpc | None
    clock: Clock
    sleep: Callable[[float], None]
    trigger_v2: TriggerV2Api | None = None  # Trigger V2's session (JWT, vault), if any
