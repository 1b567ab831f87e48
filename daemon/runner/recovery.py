"""Crash recovery: settle every run a previous process left in flight.

    pending, requested  nothing was signed: order afresh inside the slot's grace,
                        else record the run as skipped (with why); a run claimed
                        as a dry run stays one (never signed)
    signed, submitted   re-post the SAME signed transaction (same signature, so it
                        cannot land twice), or ask the RPC node; what cannot be
                        settled before the blockhash surely expired becomes in_doubt

Never a second transaction for a slot whose signed one might still land. A signed
run is posted (and settled) under the plan version it was claimed and signed under
(`as_signed`), never the plan as a later `plans apply` made it.

Each run's recovery stands alone: one that raises what nothing expected is logged
with its run id (``run_recovery_failed``) and looked at again next pass, and the
runs after it are still recovered (a `FatalError` still stops the daemon).

A run whose plan row can no longer be read is settled without its plan
(`plan_unreadable`): skipped if unsigned, settled as a lost answer if posted
(`in_doubt` once expired), failed once expired if signed but never posted; and
told, as any run's end is.
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
from jupcron.errors import FatalError, RetryableError
from jupcron.runner.book import RunTakenOver, order_of
from jupcron.runner.flow import changed_since_claim
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.ports import Ports, RunOptions
from jupcron.runner.settle import settle_unanswered
from jupcron.runner.timing import surely_expired, within_grace
from jupcron.store.records import PlanRecord, RunRecord

log = structlog.get_logger(__name__)

UNSIGNED = (RunStatus.PENDING, RunStatus.REQUESTED)
STALE_AFTER = 15.0  # seconds untouched after which a run's driver is taken to be gone
UNKNOWN_KIND = "unknown"  # the kind an outcome names when its plan cannot be read


class Driver(Protocol):
    """What recovery needs of the runner: its ports, and driving a run it is not driving."""

    @property
    def ports(self) -> Ports: ...
    @property
    def node(self) -> str: ...
    def is_active(self, run_id: int) -> bool: ...
    def settles_as(self, run: RunRecord) -> str: ...
    def drive(
        self, run_id: int, plan: PlanRecord, options: RunOptions | None = None
    ) -> RunOutcome: ...
    def tell(self, outcome: RunOutcome) -> None: ...


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
    one it was claimed and signed under, whatever its plan names now; for a run of a
    wallet renamed since, the name of its keypair: `Driver.settles_as`); ``runs``: only
    these runs, however fresh (the caller's own, whose drive has ended)."""
    ports = driver.ports
    now = ports.clock()
    outcomes: list[RunOutcome] = []
    for run, plan in ports.store.in_flight():
        if runs is not None and run.id not in runs:
            continue
        if driver.is_active(run.id):
            continue
        if only is not None and not only(driver.settles_as(run)):
            continue  # another daemon leads its wallet (its keypair's, if renamed)
        fresh = run.updated_at > now - timedelta(seconds=stale_after)
        if fresh and not startup and runs is None:
            continue  # perhaps another process's: taken once it goes stale
        try:
            outcomes.extend(_recover_one(driver, run, plan, startup))
        except FatalError:
            raise  # a refused API key: the daemon stops
        except RetryableError as exc:  # the store busy a moment: this run next pass
            log.error("run_recovery_failed", run_id=run.id, error=str(exc),
                      error_type=type(exc).__name__)  # fmt: skip
        except Exception:
            # one run's recovery failing (a bug, a row or an answer nothing expected)
            # must not end the pass: the same run comes first on every pass, so the
            # runs after it were never recovered. It is looked at again next pass.
            log.exception("run_recovery_failed", run_id=run.id, status=str(run.status))
    return outcomes


def _recover_one(
    driver: Driver, run: RunRecord, plan: PlanRecord | None, startup: bool
) -> list[RunOutcome]:
    """Take one run found in flight over and drive it; its outcome, if it has one."""
    ports = driver.ports
    named = None if plan is None else plan.name
    log.info("run_recovering", run_id=run.id, plan=named, status=str(run.status))
    run, moved = ports.store.advance(
        run, run.status, now=ports.clock(), expect=[run.status], step="recovery",
        detail={"found": str(run.status), "startup": startup, "by": driver.node,
                "from": run.claimed_by},
        fields={"claimed_by": driver.node}, match=order_of(run),
    )  # fmt: skip
    if not moved:
        _taken(run)
        return []
    if plan is None:
        told = plan_unreadable(driver, run)
        return [] if told is None else [told]
    plan = as_signed(ports, run, plan)
    options = recover_run(ports, run, plan, ports.clock())
    return [] if options is None else [driver.drive(run.id, plan, options)]


def as_signed(ports: Ports, run: RunRecord, plan: PlanRecord) -> PlanRecord:
    """The plan a signed (or submitted) run is posted and settled under: the version it
    was claimed and signed under, not the plan as `plans apply` made it since. Its kind
    picks the product whose execute step posts the signed bytes: a DCA plan edited into
    a price order had its deposit posted to the price-order create, a swap plan edited
    into a recurring one its Ultra transaction to the Recurring execute. Unsigned runs
    keep the plan as it is now (`changed_since_claim` skips them if it changed); so
    does a run whose claimed version was not stored."""
    if run.status in UNSIGNED or plan.version == run.plan_version:
        return plan
    claimed = ports.store.claimed_plan(run)
    if claimed is None:
        log.warning("run_claimed_plan_unknown", run_id=run.id, plan_version=run.plan_version)
        return plan
    return claimed


def plan_unreadable(driver: Driver, run: RunRecord) -> RunOutcome | None:
    """A run taken over whose plan row no longer parses (a downgrade, a hand edit;
    `plans apply` never stores one): nothing says the terms it could be ordered, judged
    or posted under, so it is settled without them. Passed over in silence, it came up
    at every pass for ever, untold, and held its amount against the caps (a `signed`
    or `submitted` one could not even be settled by hand: only an in_doubt run can).
    The outcome told to the listeners once it ended, or None (still in flight: said as
    an error, and looked at again next pass)."""
    ports = driver.ports
    try:
        ended = _end_unreadable(ports, run, ports.clock())
    except RunTakenOver:
        _taken(run)
        return None
    finally:
        ports.book.flush(run.id)
        ports.book.forget(run.id)
    if ended.status.in_flight:
        log.error("run_plan_unreadable", run_id=run.id, plan_id=run.plan_id,
                  status=str(ended.status), signature=ended.signature)  # fmt: skip
        return None
    log.warning("run_plan_unreadable", run_id=run.id, plan_id=run.plan_id,
                status=str(ended.status), error=ended.error)  # fmt: skip
    outcome = RunOutcome(
        run_id=ended.id, plan_name=f"(unreadable, id {run.plan_id})", kind=UNKNOWN_KIND,
        scheduled_for=ended.scheduled_for, status=ended.status, request_id=ended.request_id,
        signature=ended.signature, error_code=ended.error_code, error=ended.error,
    )  # fmt: skip
    driver.tell(outcome)
    return outcome


def _end_unreadable(ports: Ports, run: RunRecord, now: datetime) -> RunRecord:
    """Settle a run of an unreadable plan as far as its own row allows: unsigned, it is
    skipped (nothing is ordered under unread terms); posted, it is settled as a lost
    answer is (the RPC node, else `in_doubt` once its blockhash surely expired: never a
    second transaction); signed and never posted, it fails once its blockhash surely
    expired (it can never land), and waits till then (a daemon that reads the plan
    may still post it)."""
    why = changed_since_claim(run, None)
    if run.status in UNSIGNED:
        return ports.book.finish(run, RunStatus.SKIPPED, step="recovery_skip",
                                 error=f"interrupted before signing; {why}")  # fmt: skip
    if run.status is RunStatus.SUBMITTED:
        return settle_unanswered(ports, run, now)
    if surely_expired(run, now, ports.config.runner.blockhash_validity):
        return ports.book.finish(
            run, RunStatus.FAILED, step="recovery_expired_unposted",
            error=f"signed, never posted, and its blockhash has expired: it can never "
            f"land; {why}",
        )  # fmt: skip
    return run


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
