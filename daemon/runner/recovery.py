"""Crash recovery: settle every run a previous process left in flight.

    pending, requested  nothing was signed: order afresh inside the slot's grace,
                        else record the run as skipped (with why); a run claimed
                        as a dry run stays one (never signed)
    signed, submitted   re-post the SAME signed transaction (same signature, so it
                        cannot land twice), or ask the RPC node; what cannot be
                        settled before the blockhash surely expired becomes in_doubt

Never a second transaction for a slot whose signed one might still land.
Runs this process is driving right now are left alone, and so are runs touched
in the last `stale_after` seconds: another process may be driving them (a
`jupcron fire` in another shell, or on PostgreSQL the daemon that led their
wallet a moment ago). Only two callers may take fresh runs: a daemon that took
the single-daemon lock (SQLite) at its own start, when no other daemon can be
driving (``startup``), and `jupcron fire` for the one run it has just driven
itself (``runs``). Either way every move is a compare-and-set on the run's
status, order and driver (`jupcron.runner.book.order_of`): a driver that finds the
run moved stops, so even a wrong guess here never posts twice.

A recovery first takes the run over: its own name in ``claimed_by``, by a
compare-and-set, before it posts or orders anything (the ``recovery`` event). The
driver it took the run from, if it was only frozen (SIGSTOP, a VM paused past its
lease), fails its next write when it resumes: a re-post of the same bytes changes
no other column, so without the name a resumed driver that had moved the run to
`submitted` itself took an answer of -1 (the API forgot the requestId two minutes
on) for proof that nothing landed, and ordered afresh beside the landed re-post.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from typing import Protocol

import structlog

from jupcron.domain import RunStatus
from jupcron.runner.book import order_of
from jupcron.runner.flow import changed_since_claim
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.ports import Ports, RunOptions
from jupcron.runner.timing import within_grace
from jupcron.store.records import PlanRecord, RunRecord

log = structlog.get_logger(__name__)

UNSIGNED = (RunStatus.PENDING, RunStatus.REQUESTED)
STALE_AFTER = 15.0  # seconds untouched after which a run's driver is taken to be gone


class Driver(Protocol):
    """What recovery needs of the runner: its ports, and driving a run it is not driving."""

    @property
    def ports(self) -> Ports: ...
    @property
    def node(self) -> str: ...
    def is_active(self, run_id: int) -> bool: ...
    def drive(
        self, run_id: int, plan: PlanRecord, options: RunOptions | None = None
    ) -> RunOutcome: ...


def recover(
    driver: Driver,
    *,
    startup: bool = False,
    stale_after: float = STALE_AFTER,
    only: Callable[[str], bool] | None = None,
    runs: Collection[int] | None = None,
) -> list[RunOutcome]:
    """Drive every run left in flight (see the module's text); their outcomes.
    ``startup``: fresh runs too (the single daemon at its start); ``only``: the wallets
    whose runs are ours (those this daemon leads), asked of each run's own wallet (the
    one it was claimed and signed under, whatever its plan names now); ``runs``: only
    these runs, however fresh (the caller's own, whose drive has ended)."""
    ports = driver.ports
    now = ports.clock()
    outcomes: list[RunOutcome] = []
    for run, plan in ports.store.in_flight():
        if runs is not None and run.id not in runs:
            continue
        if plan is None or driver.is_active(run.id):
            continue
        if only is not None and not only(run.wallet):
            continue  # another daemon leads its wallet
        fresh = run.updated_at > now - timedelta(seconds=stale_after)
        if fresh and not startup and runs is None:
            continue  # perhaps another process's: taken once it goes stale
        log.info("run_recovering", run_id=run.id, plan=plan.name, status=str(run.status))
        run, moved = ports.store.advance(
            run, run.status, now=ports.clock(), expect=[run.status], step="recovery",
            detail={"found": str(run.status), "startup": startup, "by": driver.node,
                    "from": run.claimed_by},
            fields={"claimed_by": driver.node}, match=order_of(run),
        )  # fmt: skip
        if not moved:
            _taken(run)
            continue
        options = recover_run(ports, run, plan, ports.clock())
        if options is not None:
            outcomes.append(driver.drive(run.id, plan, options))
    return outcomes


def recover_run(ports: Ports, run: RunRecord, plan: PlanRecord, now: datetime) -> RunOptions | None:
    """Ready a run found in flight for its drive: an unsigned one out of its grace (or
    of a plan changed since) is recorded as skipped; a `requested` one goes back to
    `pending` for a fresh order. The options to drive it with; None when another
    driver moved it since it was read (it is theirs: not driven here)."""
    reason = _why_not_reorder(run, plan, now) if run.status in UNSIGNED else None
    moved = True
    if reason is not None:
        _, moved = ports.store.advance(
            run, RunStatus.SKIPPED, now=now, expect=[run.status], step="recovery_skip",
            detail={"reason": reason}, fields={"error": reason}, match=order_of(run),
        )  # fmt: skip
        return RunOptions() if moved else _taken(run)
    if run.status is RunStatus.REQUESTED:
        _, moved = ports.store.advance(
            run, RunStatus.PENDING, now=now, expect=[RunStatus.REQUESTED], step="reorder",
            detail={"reason": "recovery: nothing was signed, order afresh"},
            match=order_of(run),
        )  # fmt: skip
    if not moved:
        return _taken(run)
    return RunOptions(trigger=run.trigger, claimed_dry_run=claimed_dry_run(ports, run))


def _taken(run: RunRecord) -> RunOptions | None:
    """Another driver moved the run since it was read: not driven here."""
    log.warning("recovery_run_taken", run_id=run.id, found=str(run.status))
    return None


def claimed_dry_run(ports: Ports, run: RunRecord) -> str | None:
    """Why the run was a dry run when it was claimed (its ``claimed`` event), or
    ``None``: an interrupted `fire --dry-run` must not be signed by its recovery."""
    claimed = ports.book.claimed(run.id)
    if not claimed.get("dry_run"):
        return None
    return f"{claimed.get('source') or 'dry run'} (as claimed)"


def _why_not_reorder(run: RunRecord, plan: PlanRecord, now: datetime) -> str | None:
    changed = changed_since_claim(run, plan)
    if changed is not None:
        return f"interrupted before signing; {changed}"
    if not within_grace(run, plan, now):
        what = "fire's" if run.trigger == "manual" else "slot's"
        return f"interrupted before signing, and the {what} grace period has passed"
    return None
