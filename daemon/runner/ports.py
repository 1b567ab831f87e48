"""What a run's steps work with: the store, the API, the wallet, the RPC node and
one clock, handed to plain functions as one value.

The steps (`order`, `sign`, `submit`, `settle`, `recovery`) are functions of
(ports, run, plan, now): they decide, the ports do the I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jupcron.api.client import JupiterClient
from jupcron.api.trigger_v2 import TriggerV2Api
from jupcron.chain.rpc import SolanaRpc
from jupcron.chain.wallet import Wallet
from jupcron.config import Config
from jupcron.domain import DEFAULT_WALLET
from jupcron.runner.book import RunBook
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord
from jupcron.txguard import GuardPolicy

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class RunOptions:
    """`dry_run`: `fire --dry-run`. `claimed_dry_run`: a run recovered after a crash
    that was claimed as a dry run: why it was one then (it stays one, whatever the
    config says now: a dry run is never signed)."""

    dry_run: bool = False
    trigger: str = "schedule"
    claimed_dry_run: str | None = None


def dry_run_source(config: Config, plan: PlanRecord, options: RunOptions) -> str | None:
    """What makes this run a dry run (ordered and checked, never signed), the first of
    `fire --dry-run`, the dry-run state a recovered run was claimed with, the config's
    `safety.dry_run`, the plan's `dry_run`; ``None``: it signs."""
    if options.dry_run:
        return "fire --dry-run"
    if options.claimed_dry_run is not None:
        return options.claimed_dry_run
    if config.safety.dry_run:
        return "safety.dry_run"
    if plan.settings.dry_run:
        return "plan"
    return None


def run_mode(config: Config, plan: PlanRecord, options: RunOptions) -> dict[str, Any]:
    """A run's dry-run state and the config it runs under, for its events."""
    source = dry_run_source(config, plan, options)
    return {"dry_run": source is not None, "source": source, "config": config.digest}


RELOADED_DRY_RUN = "safety.dry_run (turned on by a reload since the claim)"


def signing_mode(ports: Ports, plan: PlanRecord, options: RunOptions) -> dict[str, Any]:
    """A run's dry-run state at its sign step. A run claimed as a dry run stays one
    whatever a reload says since (its claim recorded its mode: it is never signed); a
    run claimed to sign becomes a dry run when the config in effect now has
    `safety.dry_run` on: once the operator turns it on, nothing is signed for real,
    however long the run's order call took."""
    claimed = run_mode(ports.config, plan, options)
    if claimed["dry_run"]:
        return claimed
    now = ports.config_now()
    if now.safety.dry_run:
        return {"dry_run": True, "source": RELOADED_DRY_RUN, "config": now.digest}
    return claimed


@dataclass(frozen=True)
class Ports:
    """`config`: the config the run was claimed with, whose terms (caps, guard policy,
    timings) it keeps to its end. `config_now`: the config in effect at this instant (a
    reload replaces it): the stops that must reach a run before it signs (the kill
    switch, `safety.dry_run` turned on) are read from it."""

    store: RunStore
    book: RunBook
    api: JupiterClient
    wallet: Wallet
    config: Config
    policy: GuardPolicy
    rpc: SolanaRpc | None
    clock: Clock
    sleep: Callable[[float], None]
    config_now: Callable[[], Config]
    trigger_v2: TriggerV2Api | None = None  # Trigger V2's session (JWT, vault), if any
    # the configured name of `wallet` (the run's wallet: `RunRecord.wallet`)
    wallet_name: str = DEFAULT_WALLET
