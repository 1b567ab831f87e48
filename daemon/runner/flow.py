"""A run's state machine, as plain functions of (ports, run, plan, now).

    pending ─► requested ─► signed ─► submitted ─► succeeded | failed
       │           │                     │
       │           └─► rejected          └─► in_doubt (cannot be settled)
       └─► skipped | dry_run | failed

Every state is committed before the side effect that follows it: the signed
transaction and its signature are in the store before execute is called, so
a crash at any instant leaves a row that recovery can finish without a second
order. The same driver serves a fresh fire and a recovery: it looks at the
row's status and carries on from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import structlog

from jupcron import failpoints
from jupcron.chain.wallet import sign_transaction
from jupcron.domain import RunStatus
from jupcron.errors import GuardRejectedError, RejectedError, RetryableError
from jupcron.products.registry import product
from jupcron.runner import judge, preflight, pricecheck, submit
from jupcron.runner.book import api_detail, api_fields, programs_of
from jupcron.runner.ports import Ports, RunOptions, run_mode, signing_mode
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.txguard import Verdict
from jupcron.txguard.simulate import BalanceCheck

log = structlog.get_logger(__name__)

MAX_STEPS = 12
ORDER_GONE = "order_gone"


def order_gone(plan: PlanRecord, exc: Exception) -> str | None:
    """The run's error when a cancel found its order already closed (filled, cancelled
    or expired): the plan's aim holds, so the run is `skipped`, never `failed`."""
    gone = product(plan.kind).order_gone
    return None if gone is None else gone(plan, exc)


def drive(ports: Ports, run: RunRecord, plan: PlanRecord, options: RunOptions) -> RunRecord:
    """Carry `run` on from its stored state to a final one (or as far as it can go now)."""
    reordered = False
    ordered: dict[str, Any] | None = None  # what the order said, once this drive ordered
    # a run claimed for this drive is ordered under the plan it was claimed with; any
    # other order (a re-order, after execute or an expired order) under the plan as
    # the store has it now: an apply meanwhile may have edited, disabled or removed it
    claimed_now = run.status is RunStatus.PENDING
    for _ in range(MAX_STEPS):
        before = run.status
        if before is RunStatus.PENDING:
            stored = plan if claimed_now else ports.store.plan(plan.id)
            claimed_now = False
            changed = changed_since_claim(run, stored)
            if changed is not None:
                return ports.book.finish(run, RunStatus.SKIPPED, error=changed,
                                         step="plan_changed_skip")  # fmt: skip
            run, ordered = order_run(ports, run, plan, ports.clock(), options)
        elif before is RunStatus.REQUESTED:
            run = sign_run(ports, run, plan, ports.clock(), options=options, ordered=ordered)
        elif before in (RunStatus.SIGNED, RunStatus.SUBMITTED):
            run, fresh_order = submit.execute(ports, run, plan, reordered)
            reordered = reordered or fresh_order
            if run.status is RunStatus.SUBMITTED:
                return run  # no answer yet: recovery settles it
        else:
            return run
        if run.status is before:
            return run  # no progress possible now
    return ports.book.finish(run, RunStatus.FAILED, step="gave_up",
                             error=f"no final state after {MAX_STEPS} steps")  # fmt: skip


def without_wallet(ports: Ports, run: RunRecord) -> RunRecord:
    """A run whose wallet this daemon does not have (the config it started with does
    not name it: removed since, or added by a reload, which loads no key): nothing is
    signed. Before signing it is `rejected`; once signed it is left as it is (recovery
    tries again, and a daemon with that wallet settles it)."""
    reason = (
        f"wallet '{run.wallet}' is not configured in this daemon (its keys are loaded at "
        "start: a wallet added since needs a restart): nothing signed"
    )
    if run.status in (RunStatus.PENDING, RunStatus.REQUESTED):
        return ports.book.finish(run, RunStatus.REJECTED, step="wallet_unknown", error=reason)
    if run.status.in_flight:
        log.error("run_wallet_unknown", wallet=run.wallet, status=str(run.status))
    return run


def changed_since_claim(run: RunRecord, plan: PlanRecord | None) -> str | None:
    """Why `run` must not be ordered under `plan` as the store has it now: the plan was
    disabled, or changed (another version: its terms or its wallet), since the run was
    claimed, or its row can no longer be read (None: nothing tells what it says now, so
    nothing is ordered). A run is ordered, judged and signed under the terms it was
    claimed with only, and only while its plan still says them: `plan` must be read from
    the store, not the record the run was handed at its claim (that one never changes)."""
    if plan is None:
        return "the plan can no longer be read from the store: nothing ordered"
    if not plan.enabled:
        return "the plan has been disabled since the run was claimed: nothing ordered"
    if plan.version != run.plan_version:
        return (
            f"the plan changed since the run was claimed (version {run.plan_version} -> "
            f"{plan.version}): nothing ordered under its new terms"
        )
    return None


def order_run(
    ports: Ports, run: RunRecord, plan: PlanRecord, now: datetime, options: RunOptions
) -> tuple[RunRecord, dict[str, Any] | None]:
    """Pre-flight, then the order call; the run, and what the order said (its
    ``ordered`` event's detail: the sign step judges by it). `drive` has checked the
    plan against the run's claim first (`changed_since_claim`). A run claimed as a dry
    run (`options`) is checked against the caps but reserves nothing (`preflight.check`)."""
    book = ports.book
    dry_run = run_mode(ports.config, plan, options)["dry_run"]
    reason = preflight.check(ports, run, plan, now, dry_run=dry_run)
    if reason is not None:
        skipped = book.finish(run, RunStatus.SKIPPED, error=reason, step="preflight_skip")
        return skipped, None
    spend = preflight.spend_of(plan)
    kind = product(plan.kind)
    try:
        ordered = kind.order(ports, plan, now, book.observer(run.id))
    except GuardRejectedError as exc:  # Trigger V2's login challenge: nothing was signed
        refused = book.finish(
            run, RunStatus.REJECTED, step="guard_refused", error=str(exc),
            detail={"reasons": list(exc.reasons), "what": "login challenge"},
        )  # fmt: skip
        return refused, None
    except (RetryableError, RejectedError) as exc:
        gone = order_gone(plan, exc)
        if gone is not None:  # a cancel with nothing left to cancel: a no-op, not a failure
            skipped = book.finish(
                run, RunStatus.SKIPPED, step=ORDER_GONE, error=gone, error_code=ORDER_GONE,
                detail=api_detail(exc), order_account=plan.body.get("order"),
            )  # fmt: skip
            return skipped, None
        failed = book.finish(
            run, RunStatus.FAILED, step="order_failed", detail=api_detail(exc),
            **api_fields(exc),
        )  # fmt: skip
        return failed, None
    failpoints.hit("after_order", plan.name)
    if ordered.skip_reason is not None:
        declined = book.finish(
            run, RunStatus.SKIPPED, step="order_declined", error=ordered.skip_reason,
            error_code=ordered.skip_code, request_id=ordered.request_id,
        )  # fmt: skip
        return declined, None
    validity = ports.config.runner.blockhash_validity
    # --- price protection (runner/pricecheck.py): an answer for another amount than the
    # plan's is refused; a quote beyond the plan's limits is skipped
    wrong = pricecheck.answered_amount(spend.amount, ordered)
    if wrong is not None:
        refused = book.finish(
            run, RunStatus.REJECTED, step="amount_refused", error=wrong,
            request_id=ordered.request_id,
            detail={"in_amount": _text(ordered.in_amount), "plan_amount": str(spend.amount)},
        )  # fmt: skip
        return refused, None
    in_amount = spend.amount  # what the plan spends (txguard caps the transaction at it)
    protection, beyond = pricecheck.at_quote(ports, plan, in_amount, ordered.out_amount)
    if beyond is not None:
        limited = book.finish(
            run, RunStatus.SKIPPED, step="price_limit_skip", error=beyond,
            request_id=ordered.request_id, detail=pricecheck.detail(protection),
        )  # fmt: skip
        return limited, None
    # --- end of price protection
    fields: dict[str, Any] = {
        "request_id": ordered.request_id,
        "unsigned_tx": ordered.transaction,
        "expires_at": ports.clock() + timedelta(seconds=validity),
        "input_mint": spend.mint,
        "output_mint": kind.output_mint(plan),
        # a dry run's amount goes on its row only as it ends (`dry_amount`): on a run in
        # flight it is counted by every cap check, and a dry run moves no money
        "in_amount": str(in_amount) if spend.mint and not dry_run else None,
        "order_account": ordered.order_account,
    }
    facts = {**ordered.detail(), **pricecheck.detail(protection)}
    run = book.advance(
        run, RunStatus.REQUESTED, expect=[RunStatus.PENDING], step="ordered",
        detail=facts, **fields,
    )  # fmt: skip
    failpoints.hit("after_requested", plan.name)
    return run, facts


def dry_amount(run: RunRecord, plan: PlanRecord) -> dict[str, Any]:
    """The amount a run claimed as a dry run would have spent, for its row as it ends
    (the audit shows what a real run would have put in): it had none while in flight,
    where every cap check would have counted it (`order_run`). Nothing for a run whose
    row has its amount already (a real run, a real one a reload turned into a dry run)."""
    spend = preflight.spend_of(plan)
    if run.in_amount is not None or spend.mint is None or not spend.amount:
        return {}
    return {"in_amount": str(spend.amount)}


def sign_run(
    ports: Ports,
    run: RunRecord,
    plan: PlanRecord,
    now: datetime,
    *,
    options: RunOptions,
    ordered: Mapping[str, Any] | None,
) -> RunRecord:
    """txguard, then sign: the signed bytes are stored before anything is posted."""
    book = ports.book
    if run.unsigned_tx is None or (run.expires_at is not None and now >= run.expires_at):
        # nothing was signed: a fresh order is safe
        return book.advance(
            run, RunStatus.PENDING, expect=[RunStatus.REQUESTED], step="reorder",
            detail={"reason": "order expired before signing"},
        )  # fmt: skip
    if ordered is None:  # ordered by an earlier drive (recovery): ask the store
        ordered = book.ordered(run.id)
    gasless = product(plan.kind).gasless and bool(ordered.get("gasless"))
    simulate = ports.rpc is not None and ports.config.guard.simulate
    try:
        verdict = judge.check(
            run.unsigned_tx, plan, ports.wallet.pubkey, ports.policy,
            ordered=ordered, gasless=gasless, rpc=ports.rpc,
            simulate=simulate,
        )  # fmt: skip
    except GuardRejectedError as exc:
        detail: dict[str, Any] = {"reasons": list(exc.reasons)}
        if isinstance(exc.evidence, BalanceCheck):
            detail["simulation"] = exc.evidence.diff
        return book.finish(
            run, RunStatus.REJECTED, step="guard_refused", error=str(exc), detail=detail,
            **dry_amount(run, plan),
        )  # fmt: skip
    summary = verdict.summary
    # as claimed, or a dry run because a reload turned safety.dry_run on since
    mode = signing_mode(ports, plan, options)
    if mode["dry_run"]:
        return book.finish(
            run, RunStatus.DRY_RUN, step="dry_run",
            detail={"guard": "accepted", "programs": programs_of(summary), **mode},
            **dry_amount(run, plan),
        )  # fmt: skip
    # the kill switch turned on (its file, or the config a reload put in effect), or the
    # plan paused, since the pre-flight (the order call may have taken its retries'
    # while): sign nothing
    stopped = preflight.stop_in_effect(ports, plan)
    if stopped is not None:
        return book.finish(run, RunStatus.SKIPPED, step="stopped_before_signing", error=stopped)
    try:
        # the transaction txguard just judged (read from run.unsigned_tx once): its bytes
        signed = sign_transaction(ports.wallet, verdict.transaction)
    except RejectedError as exc:
        return book.finish(run, RunStatus.REJECTED, step="sign_refused", error=str(exc))
    # persisted BEFORE anything is posted: a crash from here on re-posts these same bytes
    run = book.advance(
        run, RunStatus.SIGNED, expect=[RunStatus.REQUESTED], step="signed",
        signed_tx=signed.b64, signature=signed.signature,
        detail={"signature": signed.signature, **mode, **_simulated(verdict)},
    )  # fmt: skip
    failpoints.hit("after_sign", plan.name)
    return run


def _text(amount: int | None) -> str | None:
    return None if amount is None else str(amount)


def _simulated(verdict: Verdict) -> dict[str, Any]:
    """The balance diff a simulation showed, for the run's events."""
    return {"simulation": verdict.simulation.diff} if verdict.simulation else {}
