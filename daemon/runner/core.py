"""The runner: claim a slot, then drive its run through DESIGN §2's states
(`jupcron.runner.flow`), one drive per run at a time, and tell the listeners.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import structlog

from jupcron import failpoints
from jupcron.api.client import JupiterClient
from jupcron.api.trigger_v2 import TriggerV2Api
from jupcron.chain.rpc import SolanaRpc
from jupcron.chain.wallet import Wallet
from jupcron.config import Config
from jupcron.domain import DEFAULT_WALLET, RunStatus
from jupcron.errors import FatalError, RejectedError, RetryableError
from jupcron.logs import run_context
from jupcron.runner import preflight
from jupcron.runner.book import RunBook, RunTakenOver
from jupcron.runner.flow import drive, without_wallet
from jupcron.runner.outcome import RunListener, RunOutcome
from jupcron.runner.ports import Clock, Ports, RunOptions, run_mode
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.txguard import GuardPolicy
from jupcron.txguard.challenge import login_signer

__all__ = ["RunOptions", "Runner", "node_name", "utcnow"]

log = structlog.get_logger(__name__)


def utcnow() -> datetime:
    return datetime.now(UTC)


def node_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def trigger_v2_session(api: JupiterClient, wallet: Wallet, clock: Clock) -> TriggerV2Api:
    """The wallet's Trigger V2 session on `api`: logins are signed only through
    txguard's challenge check, bound to the configured API host."""
    signer = login_signer(wallet, urlsplit(api.base_url).netloc.lower())
    return TriggerV2Api(api, wallet.address, signer, wall=lambda: clock().timestamp())


class Runner:
    """Drives runs; each run with the wallet it is for (`RunRecord.wallet`, its plan's
    when claimed): that wallet signs, and txguard judges for it."""

    def __init__(
        self,
        *,
        store: RunStore,
        api: JupiterClient,
        wallet: Wallet | None = None,
        config: Config,
        wallets: Mapping[str, Wallet] | None = None,
        policy: GuardPolicy | None = None,
        rpc: SolanaRpc | None = None,
        listeners: Sequence[RunListener] = (),
        clock: Clock = utcnow,
        sleep: Callable[[float], None] = time.sleep,
        node: str | None = None,
        on_attempt: Callable[[Any], None] | None = None,
        trigger_v2: TriggerV2Api | None = None,
    ) -> None:
        self.book = RunBook(store, clock, on_attempt)
        # every wallet by name; `wallet` alone is the default one (a single-wallet runner)
        self.wallets: dict[str, Wallet] = dict(wallets or {})
        if wallet is not None:
            self.wallets.setdefault(DEFAULT_WALLET, wallet)
        if not self.wallets:
            raise ValueError("a runner needs a wallet")
        # each wallet's Trigger V2 session (its own login and JWT); `trigger_v2`: the
        # default wallet's, given
        self.sessions: dict[str, TriggerV2Api | None] = {}
        for name, own in self.wallets.items():
            given = trigger_v2 if name == DEFAULT_WALLET else None
            if given is None:
                given = trigger_v2_session(api, own, clock)
            self.sessions[name] = given
        first = DEFAULT_WALLET if DEFAULT_WALLET in self.wallets else min(self.wallets)
        self.ports = Ports(
            store=store, book=self.book, api=api, wallet=self.wallets[first], config=config,
            policy=policy or GuardPolicy.from_config(config.guard), rpc=rpc, clock=clock,
            sleep=sleep, config_now=self.config_in_effect, trigger_v2=self.sessions[first],
            wallet_name=first,
        )  # fmt: skip
        # where the config in effect now is read when it is not the latest reload's (a
        # one-shot `jupcron fire` re-reads its file): None while it says nothing new
        self.config_source: Callable[[], Config | None] | None = None
        self.listeners = list(listeners)
        self.node = node or node_name()
        self._active: set[int] = set()
        self._active_lock = threading.Lock()

    @property
    def clock(self) -> Clock:
        return self.ports.clock

    def ports_for(self, ports: Ports, wallet: str) -> Ports | None:
        """`ports` with wallet `wallet` (its key and its Trigger V2 session); ``None``
        when this runner has no wallet of that name."""
        if wallet == ports.wallet_name:
            return ports
        own = self.wallets.get(wallet)
        if own is None:
            return None
        return replace(ports, wallet=own, wallet_name=wallet, trigger_v2=self.sessions[wallet])

    def _signer_of(self, ports: Ports, run: RunRecord) -> Ports | None:
        """A signed run whose wallet name this runner does not have for its keypair, but
        whose keypair it does under another name (`runs.owner`: the wallet renamed in the
        config since): settled with that key (its Trigger V2 session: the API holds the
        signed deposit under that wallet), by its same signed bytes, instead of never
        (`without_wallet` only logs a signed run) or under another key's session. An
        unsigned one is not ordered under another name."""
        name = self._renamed(run) if run.signed_tx is not None else None
        if name is None:
            return None
        log.warning("run_wallet_renamed", wallet=run.wallet, settled_as=name)
        return self.ports_for(ports, name)

    def _renamed(self, run: RunRecord) -> str | None:
        """The name this runner has for an in-flight run's keypair (`runs.owner`) when
        the run's own wallet name is not that keypair here: the wallet renamed in the
        config since (or two names swapped). An unsigned run whose name now holds
        another key keeps its name (it is ordered and signed by the new key); None
        when the name stands."""
        if run.owner is None or not run.status.in_flight:
            return None
        named = self.wallets.get(run.wallet)
        if named is not None and (named.address == run.owner or run.signed_tx is None):
            return None
        for name, wallet in self.wallets.items():
            if wallet.address == run.owner:
                return name
        return None

    def settles_as(self, run: RunRecord) -> str:
        """The wallet (by name) whose leader drives `run` to its end: its own, or for a
        run of a wallet renamed since, the name of its keypair here (a signed run is
        settled with that key, an unsigned one rejected: `without_wallet`). Recovery asks
        the leadership about this one: on PostgreSQL no daemon leads the old name."""
        return self._renamed(run) or run.wallet

    def is_active(self, run_id: int) -> bool:
        with self._active_lock:
            return run_id in self._active

    def active_count(self) -> int:
        with self._active_lock:
            return len(self._active)

    def config_in_effect(self) -> Config:
        """The config in effect now (the latest reload's, or what `config_source` reads):
        every run's `config_now`, so that a kill switch or `safety.dry_run` turned on
        reaches the runs under way."""
        if self.config_source is not None:
            found = self.config_source()
            if found is not None:
                return found
        return self.ports.config

    def reconfigure(self, config: Config) -> None:
        """A reload: new safety limits and guard policy for the runs that start from now
        (each run keeps the ports it started with: one config from claim to end, for its
        terms); the kill switch and `safety.dry_run` reach the runs under way too, before
        they sign (`Ports.config_now`)."""
        policy = GuardPolicy.from_config(config.guard)
        self.ports = replace(self.ports, config=config, policy=policy)

    # ---- entry points -------------------------------------------------------------

    def fire(
        self,
        plan: PlanRecord,
        scheduled_for: datetime,
        options: RunOptions | None = None,
        *,
        alone: bool = False,
    ) -> RunOutcome | None:
        """Claim (plan, slot) and run it; ``None`` if another fire already has the slot.
        `alone` (`jupcron fire`, each fire a slot of its own): claimed only while the
        plan has no run that has not ended, decided in the claim's own transaction;
        else `UnendedRunError` is raised, with nothing written or ordered."""
        options = options or RunOptions()
        ports = self.ports
        now = ports.clock()
        own = self.wallets.get(plan.wallet)  # None: this runner lacks it (run rejected)
        mode = run_mode(ports.config, plan, options)  # a dry run's row holds no cap's room
        spends = preflight.claimed_spend(plan, ports.config, dry_run=mode["dry_run"])
        run = ports.store.claim(
            plan, scheduled_for, now=now, trigger=options.trigger, claimed_by=self.node,
            detail=mode, spends=spends,
            owner=None if own is None else own.address, alone=alone,
        )  # fmt: skip
        failpoints.hit("after_claim", plan.name)
        if run is None:
            log.info("run_slot_taken", plan=plan.name, scheduled_for=scheduled_for.isoformat())
            return None
        lag = (now - scheduled_for).total_seconds()
        return self.drive(run.id, plan, options, fire_lag=lag, claimed=run, ports=ports)

    def drive(
        self,
        run_id: int,
        plan: PlanRecord,
        options: RunOptions | None = None,
        fire_lag: float | None = None,
        claimed: RunRecord | None = None,
        ports: Ports | None = None,
    ) -> RunOutcome:
        """Carry a run on from whatever state its row is in, to a final one
        (`claimed`: the row as this caller just inserted it, saving a read; `ports`:
        those it was claimed with, so that one config serves it throughout)."""
        options = options or RunOptions()
        with self._active_lock:
            if run_id in self._active:
                raise RuntimeError(f"run {run_id} is already being driven")
            self._active.add(run_id)
        try:
            return self._drive_and_report(
                ports or self.ports, run_id, plan, options, fire_lag, claimed
            )
        finally:
            self.book.forget(run_id)
            with self._active_lock:
                self._active.discard(run_id)

    def _drive_and_report(
        self,
        ports: Ports,
        run_id: int,
        plan: PlanRecord,
        options: RunOptions,
        fire_lag: float | None,
        claimed: RunRecord | None,
    ) -> RunOutcome:
        book = ports.book
        taken_over = False
        with run_context(plan=plan.name, kind=str(plan.kind), run_id=run_id):
            try:
                record = claimed or book.load(run_id)
                # a signed run: its own keypair's, whatever name the config gives it now
                own = self._signer_of(ports, record) or self.ports_for(ports, record.wallet)
                if own is None:
                    record = without_wallet(ports, record)
                else:
                    record = drive(own, record, plan, options)
                book.flush(run_id)
            except RunTakenOver as taken:
                # another driver moved the run (a recovery elsewhere): it is theirs now;
                # this drive posts nothing more, and they report its end
                log.warning("run_taken_over", status=str(taken.record.status))
                record, taken_over = taken.record, True
                book.flush(run_id)
            except FatalError:
                book.flush(run_id)  # what the API answered so far, then the daemon stops
                raise
            except (RetryableError, RejectedError) as exc:
                # a store outage mid-run: the row says where we were (a FatalError, such
                # as a refused API key, goes up: the daemon stops)
                log.error("run_interrupted", error=str(exc), error_type=type(exc).__name__)
                record = book.load(run_id)
                book.flush(run_id)
            outcome = RunOutcome(
                run_id=record.id, plan_name=plan.name, kind=str(plan.kind),
                scheduled_for=record.scheduled_for, status=record.status,
                request_id=record.request_id, signature=record.signature,
                error_code=record.error_code, error=record.error, fire_lag=fire_lag,
                taken_over=taken_over,
            )  # fmt: skip
            if taken_over:
                return outcome
            level = "info" if outcome.ok or record.status.in_flight else "warning"
            if record.status is RunStatus.IN_DOUBT:
                level = "error"
            getattr(log, level)(
                "run_finished", status=str(record.status), request_id=record.request_id,
                signature=record.signature, error_code=record.error_code, error=record.error,
                attempts=record.attempts, scheduled_for=record.scheduled_for.isoformat(),
            )  # fmt: skip
        if not record.status.in_flight:
            self.tell(outcome)
        return outcome

    def tell(self, outcome: RunOutcome) -> None:
        """Tell the listeners (metrics, webhook, alerts) that a run ended: one this
        runner drove, or one its recovery ended without a drive (`jupcron.runner.recovery`)."""
        for listener in self.listeners:
            try:
                listener.run_finished(outcome)
            except Exception:  # a broken listener must not break the run
                log.exception("run_listener_failed", listener=type(listener).__name__)
