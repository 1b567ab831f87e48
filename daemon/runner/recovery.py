"""Crash recovery: settle every run a previous process left in flight.

    pending, requested  nothing was signed: order afresh inside the slot's grace,
                        else record the run as skipped (with why)
    signed, submitted   re-post the SAME signed transaction (same signature, so it
                        cannot land twice), or ask the RPC node; what cannot be
                        settled before the blockhash surely expired becomes in_doubt

Never a second transaction for a slot whose signed one might still land.
Runs this process is driving right now are left alone; at run time (not at
start-up) so are runs touched in the last `stale_after` seconds, which may
belong to a `jupcron fire` in another shell.
"""

from __future__ import annotations

from datetime import timedelta

import structlog
from sqlalchemy.orm import Session

from daemon.runner.core import Runner, RunOptions
from daemon.runner.outcome import RunOutcome
from daemon.store import runs
from daemon.store.engine import transaction
from daemon.store.models import Plan
from daemon.store.records import PlanRecord, RunRecord
from daemon.store.types import RunStatus

log = structlog.get_logger(__name__)

UNSIGNED = (RunStatus.PENDING, RunStatus.REQUESTED)


def _plan(session: Session, plan_id: int) -> PlanRecord | None:
    row = session.get(Plan, plan_id)
    return PlanRecord.from_row(row) if row is not None else None


def recover(
    runner: Runner, *, startup: bool = False, stale_after: float = 15.0
) -> list[RunOutcome]:
    now = runner.clock()
    with runner.factory() as session:
        pending = [(run, _plan(session, run.plan_id)) for run in runs.in_flight(session)]
    outcomes: list[RunOutcome] = []
    for run, plan in pending:
        if plan is None or runner.is_active(run.id):
            continue
        if not startup and run.updated_at > now - timedelta(seconds=stale_after):
            continue
        log.info("run_recovering", run_id=run.id, plan=plan.name, status=str(run.status))
        runner.book.event(run.id, "recovery", {"found": str(run.status), "startup": startup})
        reason = _why_not_reorder(runner, run, plan) if run.status in UNSIGNED else None
        if reason is not None:
            with transaction(runner.factory) as session:
                runs.advance(
                    session, run.id, RunStatus.SKIPPED, now=runner.clock(), expect=[run.status],
                    step="recovery_skip", detail={"reason": reason}, error=reason,
                )  # fmt: skip
            outcomes.append(runner.drive(run.id, plan))
            continue
        if run.status is RunStatus.REQUESTED:
            with transaction(runner.factory) as session:
                runs.advance(
                    session, run.id, RunStatus.PENDING, now=runner.clock(),
                    expect=[RunStatus.REQUESTED], step="reorder",
                    detail={"reason": "recovery: nothing was signed, order afresh"},
                )  # fmt: skip
        options = RunOptions(trigger=run.trigger)
        outcomes.append(runner.drive(run.id, plan, options))
    return outcomes


def _why_not_reorder(runner: Runner, run: RunRecord, plan: PlanRecord) -> str | None:
    if not plan.enabled:
        return "interrupted before signing; the plan has been disabled since"
    if plan.version != run.plan_version:
        return (
            f"interrupted before signing; the plan changed since (version {run.plan_version} "
            f"-> {plan.version})"
        )
    if run.trigger != "manual" and not runner.within_grace(run, plan):
        return "interrupted before signing, and the slot's grace period has passed"
    return None
