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
from daemon.runner import preflight
from daemon.runner.book import RunBook, api_detail, api_fields, programs_of
from daemon.runner.outcome import RunListener, RunOutcome
from daemon.runner.settle import settle_unanswered
from daemon.runner.steps import OrderApi, execute, order
from daemon.runner.timing import grace_of, within_grace
from daemon.store import audit, runs
from daemon.store.engine import begin, transaction
from daemon.store.records import PlanRecord, RunRecord
from daemon.store.types import RunStatus
from daemon.txguard import GuardPolicy, check
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
# Ultra execute codes after which the transaction can no longer land: a fresh order is safe
CANNOT_LAND = frozenset({-1004, -1005, -2003, -2004})
# -1 (requestId unknown) proves nothing landed only on the first post of these bytes
# retryable codes where the old transaction might still land until its blockhash expires
MAY_STILL_LAND = frozenset({-1000, -1001, -2000, -2001})


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
                run, fresh_order = self._execute(run, plan, reordered)
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
        try:
            request = plan.request
            mints = [m for m in (request.get("inputMint"), request.get("outputMint")) if m]
            summary = check(
                run.unsigned_tx, self.wallet.pubkey, self.policy, gasless=gasless, mints=mints
            )
        except GuardRejectedError as exc:
            return self.book.finish(
                run, RunStatus.REJECTED, step="guard_refused", error=str(exc),
                detail={"reasons": list(exc.reasons)},
            )  # fmt: skip
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
            detail={"signature": signed.signature},
        )  # fmt: skip
        failpoints.hit("after_sign")
        return run

    def _execute(self, run: RunRecord, plan: PlanRecord, reordered: bool) -> tuple[RunRecord, bool]:
        """Post the stored signed transaction; settle the run from the answer.

        Only the first post of these bytes can prove that they did not land: an
        answer to a re-post (after a crash or a lost answer) that is not a clear
        result is settled by `_settle_unanswered`, never by a fresh order."""
        first_post = run.status is RunStatus.SIGNED
        if run.status is RunStatus.SIGNED:
            run = self.book.advance(
                run, RunStatus.SUBMITTED, expect=[RunStatus.SIGNED], step="submit"
            )
        if run.signed_tx is None or run.request_id is None:
            return self.book.finish(
                run, RunStatus.IN_DOUBT, step="in_doubt",
                error="run marked signed but its signed transaction is not in the store",
            ), False  # fmt: skip
        with structlog.contextvars.bound_contextvars(
            request_id=run.request_id, signature=run.signature
        ):
            failpoints.hit("before_execute")
            posts: list[Any] = []
            observe = self.book.observer(run.id)

            def count(attempt: Any) -> None:
                posts.append(attempt)
                observe(attempt)

            try:
                result = execute(self.api, plan, run.signed_tx, run.request_id, count)
            except RetryableError as exc:
                # no answer: the transaction may or may not have landed; recovery settles it
                self.book.event(run.id, "execute_unanswered", api_detail(exc))
                return self._settle(run), False
            except (RejectedError, ApiError) as exc:
                if first_post and len(posts) <= 1:
                    refused = self.book.finish(
                        run, RunStatus.FAILED, step="execute_refused",
                        detail=api_detail(exc), **api_fields(exc),
                    )  # fmt: skip
                    return refused, False
                self.book.event(run.id, "execute_refused_repost", api_detail(exc))
                return self._settle(run), False
        first_post = first_post and len(posts) <= 1
        failpoints.hit("after_execute")
        if result.succeeded:
            return self.book.finish(
                run, RunStatus.SUCCEEDED, step="executed",
                signature=result.signature or run.signature, slot=result.slot,
                out_amount=result.output_amount,
                in_amount=result.input_amount or run.in_amount,
                order_account=result.order or run.order_account,
                detail={"slot": result.slot, "code": result.code},
            ), False  # fmt: skip
        code = result.code
        fields = {"error_code": None if code is None else str(code), "error": result.error}
        if result.http_status is not None and result.http_status >= 500:
            # e.g. trigger's "unable to confirm transaction": it may still land
            self.book.event(run.id, "execute_unconfirmed", fields)
            return self._settle(run), False
        if not first_post and (result.status is None or result.http_status != 200):
            # an error answer to a re-post says nothing about the first post's fate
            self.book.event(run.id, "execute_refused_repost", fields)
            return self._settle(run), False
        if self._may_reorder(run, plan, code, reordered, first_post):
            moved = self.book.advance(
                run, RunStatus.PENDING, expect=[RunStatus.SUBMITTED], step="reorder",
                detail={"reason": "execute failed, fresh order", **fields},
            )  # fmt: skip
            return moved, True
        if result.status is None:
            # no result (requestId unknown): we cannot tell from here whether the bytes landed
            self.book.event(run.id, "execute_unknown_request", fields)
            return self._settle(run), False
        return self.book.finish(
            run, RunStatus.FAILED, step="execute_failed",
            signature=result.signature or run.signature, slot=result.slot, **fields,
        ), False  # fmt: skip

    def _may_reorder(
        self,
        run: RunRecord,
        plan: PlanRecord,
        code: int | str | None,
        reordered: bool,
        first_post: bool,
    ) -> bool:
        """A swap that failed with a retry-with-fresh-order code may be ordered again,
        once, inside the slot's grace, and only when the first transaction can no
        longer land."""
        if plan.kind != "swap" or reordered or not isinstance(code, int):
            return False
        cannot_land = code in CANNOT_LAND or (code == -1 and first_post)
        if not cannot_land and code not in MAY_STILL_LAND:
            return False
        if not self.within_grace(run, plan):
            return False
        return cannot_land or self._wait_for_expiry(run, plan)

    # ---- pre-flight helpers ---------------------------------------------------------

    def _wait_for_expiry(self, run: RunRecord, plan: PlanRecord) -> bool:
        """For codes after which the old transaction might still land: wait until its
        blockhash has expired (if the slot's grace allows), so a fresh order cannot
        make two land."""
        if run.expires_at is None:
            return True
        wait = (run.expires_at - self.clock()).total_seconds()
        if wait <= 0:
            return True
        grace_end = run.scheduled_for + timedelta(
            seconds=grace_of(plan, self.config.runner.default_grace)
        )
        if run.expires_at >= grace_end:
            return False
        self.book.event(run.id, "wait_for_expiry", {"seconds": round(wait, 3)})
        self.sleep(wait)
        return True

    def within_grace(self, run: RunRecord, plan: PlanRecord) -> bool:
        return within_grace(run, plan, self.clock(), self.config.runner.default_grace)

    def _settle(self, run: RunRecord) -> RunRecord:
        return settle_unanswered(
            self.book, run, rpc=self.rpc, clock=self.clock,
            validity=self.config.runner.blockhash_validity,
        )  # fmt: skip
