"""The runner: claim a slot, then drive its run through DESIGN §2's states.

    pending ─► requested ─► signed ─► submitted ─► succeeded | failed
       │           │                     │
       │           └─► rejected          └─► in_doubt (cannot be settled)
       └─► skipped | dry_run | failed

Every state is committed before the side effect that follows it: the signed
transaction and its signature are in the store before execute is called, so
a crash at any instant leaves a row that `resume` can finish without a second
order. The same driver serves a fresh fire and a recovery: it looks at the
row's status and carries on from there.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from sqlalchemy.orm import Session, sessionmaker

from daemon import failpoints
from daemon.config import Config
from daemon.errors import (
    ApiError,
    GuardRejectedError,
    JupcronError,
    RejectedError,
    RetryableError,
)
from daemon.logs import run_context
from daemon.rpc import SolanaRpc
from daemon.runner import preflight, submit
from daemon.runner.book import RunBook, api_detail, api_fields, programs_of
from daemon.runner.outcome import RunListener, RunOutcome
from daemon.runner.steps import OrderApi, expectation, order
from daemon.runner.timing import within_grace
from daemon.store import audit, runs
from daemon.store.engine import begin, transaction
from daemon.store.records import PlanRecord, RunRecord
from daemon.store.types import RunStatus
from daemon.txguard import GuardPolicy, Verdict, check
from daemon.txguard.expect import Expectation
from daemon.txguard.simulate import BalanceCheck
from daemon.wallet import Wallet, sign_transaction

log = structlog.get_logger(__name__)

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def node_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class RunOptions:
    dry_run: bool = False
    trigger: str = "schedule"


MAX_STEPS = 12


def _simulated(verdict: Verdict) -> dict[str, Any]:
    """The balance diff a simulation showed, for the run's events."""
    return {"simulation": verdict.simulation.diff} if verdict.simulation else {}


class Runner:
    def __init__(
        self,
        *,
        factory: sessionmaker[Session],
        api: OrderApi,
        wallet: Wallet,
        config: Config,
        policy: GuardPolicy | None = None,
        rpc: SolanaRpc | None = None,
        listeners: Sequence[RunListener] = (),
        clock: Clock = utcnow,
        sleep: Callable[[float], None] = time.sleep,
        node: str | None = None,
        on_attempt: Callable[[Any], None] | None = None,
    ) -> None:
        self.factory = factory
        self.api = api
        self.wallet = wallet
        self.config = config
        self.policy = policy or GuardPolicy.from_config(config.guard)
        self.rpc = rpc
        self.listeners = list(listeners)
        self.clock = clock
        self.sleep = sleep
        self.node = node or node_name()
        self.on_attempt = on_attempt
        self.book = RunBook(factory, clock, on_attempt)
        self._active: set[int] = set()
        self._active_lock = threading.Lock()

    def is_active(self, run_id: int) -> bool:
        with self._active_lock:
            return run_id in self._active

    def active_count(self) -> int:
        with self._active_lock:
            return len(self._active)

    def reconfigure(self, config: Config) -> None:
        """SIGHUP: new safety limits and guard policy for the runs that start from now."""
        self.config = config
        self.policy = GuardPolicy.from_config(config.guard)

    # ---- entry points -------------------------------------------------------------

    def fire(
        self, plan: PlanRecord, scheduled_for: datetime, options: RunOptions | None = None
    ) -> RunOutcome | None:
        """Claim (plan, slot) and run it; ``None`` if another fire already has the slot."""
        options = options or RunOptions()
        now = self.clock()
        with begin(self.book.engine) as conn:
            run = runs.claim_record(
                conn, plan, scheduled_for, now=now, trigger=options.trigger,
                claimed_by=self.node,
            )  # fmt: skip
        failpoints.hit("after_claim")
        if run is None:
            log.info("run_slot_taken", plan=plan.name, scheduled_for=scheduled_for.isoformat())
            return None
        lag = (now - scheduled_for).total_seconds()
        return self.drive(run.id, plan, options, fire_lag=lag, claimed=run)

    def drive(
        self,
        run_id: int,
        plan: PlanRecord,
        options: RunOptions | None = None,
        fire_lag: float | None = None,
        claimed: RunRecord | None = None,
    ) -> RunOutcome:
        """Carry a run on from whatever state its row is in, to a final one
        (`claimed`: the row as this caller just inserted it, saving a read)."""
        options = options or RunOptions()
        with self._active_lock:
            if run_id in self._active:
                raise RuntimeError(f"run {run_id} is already being driven")
            self._active.add(run_id)
        try:
            return self._drive_and_report(run_id, plan, options, fire_lag, claimed)
        finally:
            self.book.forget(run_id)
            with self._active_lock:
                self._active.discard(run_id)

    def _drive_and_report(
        self,
        run_id: int,
        plan: PlanRecord,
        options: RunOptions,
        fire_lag: float | None,
        claimed: RunRecord | None,
    ) -> RunOutcome:
        with run_context(plan=plan.name, kind=str(plan.kind), run_id=run_id):
            try:
                record = self._drive(claimed or self.book.load(run_id), plan, options)
                self.book.flush(run_id)
            except JupcronError as exc:  # a store outage mid-run: the row says where we were
                log.error("run_interrupted", error=str(exc), error_type=type(exc).__name__)
                record = self.book.load(run_id)
                self.book.flush(run_id)
            outcome = RunOutcome(
                run_id=record.id, plan_name=plan.name, kind=str(plan.kind),
                scheduled_for=record.scheduled_for, status=record.status,
                request_id=record.request_id, signature=record.signature,
                error_code=record.error_code, error=record.error, fire_lag=fire_lag,
            )  # fmt: skip
            level = "info" if outcome.ok or record.status.in_flight else "warning"
            if record.status is RunStatus.IN_DOUBT:
                level = "error"
            getattr(log, level)(
                "run_finished", status=str(record.status), request_id=record.request_id,
                signature=record.signature, error_code=record.error_code, error=record.error,
                attempts=record.attempts, scheduled_for=record.scheduled_for.isoformat(),
            )  # fmt: skip
        if not record.status.in_flight:
            for listener in self.listeners:
                try:
                    listener.run_finished(outcome)
                except Exception:  # a broken listener must not break the run
                    log.exception("run_listener_failed", listener=type(listener).__name__)
        return outcome

    # ---- the state machine --------------------------------------------------------

    def _drive(self, run: RunRecord, plan: PlanRecord, options: RunOptions) -> RunRecord:
        reordered = False
        gasless: bool | None = None  # known once this drive has ordered
        for _ in range(MAX_STEPS):
            before = run.status
            if before is RunStatus.PENDING:
                run, gasless = self._preflight_and_order(run, plan, options)
            elif before is RunStatus.REQUESTED:
                run = self._guard_and_sign(run, plan, options, gasless)
            elif before in (RunStatus.SIGNED, RunStatus.SUBMITTED):
                run, fresh_order = submit.execute(self, run, plan, reordered)
                reordered = reordered or fresh_order
                if run.status is RunStatus.SUBMITTED:
                    return run  # no answer yet: recovery settles it
            else:
                return run
            if run.status is before:
                return run  # no progress possible now
        return self.book.finish(run, RunStatus.FAILED, step="gave_up",
                            error=f"no final state after {MAX_STEPS} steps")  # fmt: skip

    def _preflight_and_order(
        self, run: RunRecord, plan: PlanRecord, options: RunOptions
    ) -> tuple[RunRecord, bool | None]:
        """Pre-flight, then the order call; the run, and whether the order is gasless."""
        now = self.clock()
        reason = preflight.kill_switch(self.config)
        if reason is None and preflight.caps_apply(plan, self.config):
            # check the caps and reserve this run's amount in one serialized transaction,
            # so two runs racing for the last of a cap cannot both pass (a run no cap
            # limits has its amount on its row from the `requested` step on)
            with transaction(self.factory) as session:
                audit.lock_spending(session)
                reason = preflight.caps(session, plan, self.config, now=now, run_id=run.id)
                if reason is None:
                    preflight.reserve(session, run.id, plan)
        if reason is None and preflight.wants_balance_check(plan, self.config):
            reason = preflight.balance(
                self.api, self.wallet.address, plan, self.book.observer(run.id)
            )
        if reason is not None:
            skipped = self.book.finish(run, RunStatus.SKIPPED, error=reason, step="preflight_skip")
            return skipped, None
        spend = preflight.spend_of(plan)
        try:
            ordered = order(self.api, plan, self.wallet.address, self.book.observer(run.id))
        except (RetryableError, RejectedError, ApiError) as exc:
            failed = self.book.finish(
                run, RunStatus.FAILED, step="order_failed", detail=api_detail(exc),
                **api_fields(exc),
            )  # fmt: skip
            return failed, None
        failpoints.hit("after_order")
        if ordered.skip_reason is not None:
            declined = self.book.finish(
                run, RunStatus.SKIPPED, step="order_declined", error=ordered.skip_reason,
                error_code=ordered.skip_code, request_id=ordered.request_id,
            )  # fmt: skip
            return declined, None
        now = self.clock()
        fields: dict[str, Any] = {
            "request_id": ordered.request_id,
            "unsigned_tx": ordered.transaction,
            "expires_at": now + timedelta(seconds=self.config.runner.blockhash_validity),
            "input_mint": spend.mint,
            "output_mint": plan.request.get("outputMint"),
            "in_amount": str(ordered.in_amount if ordered.in_amount is not None else spend.amount)
            if spend.mint
            else None,
            "order_account": ordered.order_account,
        }
        run = self.book.advance(
            run, RunStatus.REQUESTED, expect=[RunStatus.PENDING], step="ordered",
            detail={"request_id": ordered.request_id, "gasless": ordered.gasless}, **fields,
        )  # fmt: skip
        failpoints.hit("after_requested")
        return run, bool(ordered.gasless)

    def _guard_and_sign(
        self, run: RunRecord, plan: PlanRecord, options: RunOptions, gasless: bool | None
    ) -> RunRecord:
        now = self.clock()
        if run.unsigned_tx is None or (run.expires_at is not None and now >= run.expires_at):
            # nothing was signed: a fresh order is safe
            return self.book.advance(
                run, RunStatus.PENDING, expect=[RunStatus.REQUESTED], step="reorder",
                detail={"reason": "order expired before signing"},
            )  # fmt: skip
        if gasless is None:  # ordered by an earlier drive (recovery): ask the store
            gasless = plan.kind == "swap" and self.book.was_gasless(run.id)
        gasless = bool(gasless and plan.kind == "swap")
        spend = preflight.spend_of(plan)
        expect = expectation(plan, spend.mint, spend.amount)
        try:
            verdict = check(
                run.unsigned_tx, self.wallet.pubkey, self.policy, gasless=gasless,
                expect=expect, mint_programs=self._mint_programs(expect),
                simulator=self.rpc if self.rpc is not None and self.config.guard.simulate else None,
            )  # fmt: skip
        except GuardRejectedError as exc:
            detail: dict[str, Any] = {"reasons": list(exc.reasons)}
            if isinstance(exc.evidence, BalanceCheck):
                detail["simulation"] = exc.evidence.diff
            return self.book.finish(
                run, RunStatus.REJECTED, step="guard_refused", error=str(exc), detail=detail,
            )  # fmt: skip
        summary = verdict.summary
        if options.dry_run or self.config.safety.dry_run or plan.settings.get("dry_run"):
            return self.book.finish(
                run, RunStatus.DRY_RUN, step="dry_run",
                detail={"guard": "accepted", "programs": programs_of(summary)},
            )  # fmt: skip
        try:
            signed = sign_transaction(self.wallet, run.unsigned_tx)
        except RejectedError as exc:
            return self.book.finish(run, RunStatus.REJECTED, step="sign_refused", error=str(exc))
        # persisted BEFORE anything is posted: a crash from here on re-posts these same bytes
        run = self.book.advance(
            run, RunStatus.SIGNED, expect=[RunStatus.REQUESTED], step="signed",
            signed_tx=signed.b64, signature=signed.signature,
            detail={"signature": signed.signature, **_simulated(verdict)},
        )  # fmt: skip
        failpoints.hit("after_sign")
        return run

    def _mint_programs(self, expect: Expectation) -> dict[str, str] | None:
        """The plan's mints' token programs, from the chain when `rpc.url` is set
        (cached there); None without one, or when it cannot answer now: the guard
        is then stricter, never looser."""
        if self.rpc is None or not expect.mints:
            return None
        try:
            owners = self.rpc.owners(expect.mints)
        except ApiError as exc:
            log.warning("mint_programs_unknown", error=str(exc))
            return None
        return {mint: owner for mint, owner in owners.items() if owner is not None}

    def within_grace(self, run: RunRecord, plan: PlanRecord) -> bool:
        return within_grace(run, plan, self.clock(), self.config.runner.default_grace)
