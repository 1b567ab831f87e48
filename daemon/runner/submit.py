"""Posting a signed run to the execute endpoint, and settling it from the answer.

Only the first post of a run's bytes can prove that they did not land: an
answer to a re-post (after a crash or a lost answer) that is not a clear
result is settled from the chain (`rpc.url`) or marked ``in_doubt``, never by
a fresh order.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import structlog

from daemon import failpoints
from daemon.errors import ApiError, RejectedError, RetryableError
from daemon.runner import results
from daemon.runner.book import api_detail, api_fields
from daemon.runner.settle import settle_unanswered
from daemon.runner.steps import execute as post_execute
from daemon.runner.timing import grace_of
from daemon.store.records import PlanRecord, RunRecord
from daemon.store.types import RunStatus

if TYPE_CHECKING:
    from daemon.runner.core import Runner

# Ultra execute codes after which the transaction can no longer land: a fresh order is safe
CANNOT_LAND = frozenset({-1004, -1005, -2003, -2004})
# -1 (requestId unknown) proves nothing landed only on the first post of these bytes
# retryable codes where the old transaction might still land until its blockhash expires
MAY_STILL_LAND = frozenset({-1000, -1001, -2000, -2001})


def execute(
    runner: Runner, run: RunRecord, plan: PlanRecord, reordered: bool
) -> tuple[RunRecord, bool]:
    """Post the stored signed transaction; settle the run from the answer.

    Only the first post of these bytes can prove that they did not land: an
    answer to a re-post (after a crash or a lost answer) that is not a clear
    result is settled by `_settle`, never by a fresh order."""
    first_post = run.status is RunStatus.SIGNED
    if run.status is RunStatus.SIGNED:
        run = runner.book.advance(
            run, RunStatus.SUBMITTED, expect=[RunStatus.SIGNED], step="submit"
        )
    if run.signed_tx is None or run.request_id is None:
        return runner.book.finish(
            run, RunStatus.IN_DOUBT, step="in_doubt",
            error="run marked signed but its signed transaction is not in the store",
        ), False  # fmt: skip
    with structlog.contextvars.bound_contextvars(
        request_id=run.request_id, signature=run.signature
    ):
        failpoints.hit("before_execute")
        posts: list[Any] = []
        observe = runner.book.observer(run.id)

        def count(attempt: Any) -> None:
            posts.append(attempt)
            observe(attempt)

        try:
            result = post_execute(runner.api, plan, run.signed_tx, run.request_id, count)
        except RetryableError as exc:
            # no answer: the transaction may or may not have landed; recovery settles it
            runner.book.event(run.id, "execute_unanswered", api_detail(exc))
            return _settle(runner, run), False
        except (RejectedError, ApiError) as exc:
            if first_post and len(posts) <= 1:
                refused = runner.book.finish(
                    run, RunStatus.FAILED, step="execute_refused",
                    detail=api_detail(exc), **api_fields(exc),
                )  # fmt: skip
                return refused, False
            runner.book.event(run.id, "execute_refused_repost", api_detail(exc))
            return _settle(runner, run), False
    first_post = first_post and len(posts) <= 1
    results.record(runner.book.engine, run, result, runner.clock())  # every amount it returned
    failpoints.hit("after_execute")
    if result.succeeded:
        return runner.book.finish(
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
        runner.book.event(run.id, "execute_unconfirmed", fields)
        return _settle(runner, run), False
    if not first_post and (result.status is None or result.http_status != 200):
        # an error answer to a re-post says nothing about the first post's fate
        runner.book.event(run.id, "execute_refused_repost", fields)
        return _settle(runner, run), False
    if _may_reorder(runner, run, plan, code, reordered, first_post):
        moved = runner.book.advance(
            run, RunStatus.PENDING, expect=[RunStatus.SUBMITTED], step="reorder",
            detail={"reason": "execute failed, fresh order", **fields},
        )  # fmt: skip
        return moved, True
    if result.status is None:
        # no result (requestId unknown): we cannot tell from here whether the bytes landed
        runner.book.event(run.id, "execute_unknown_request", fields)
        return _settle(runner, run), False
    return runner.book.finish(
        run, RunStatus.FAILED, step="execute_failed",
        signature=result.signature or run.signature, slot=result.slot, **fields,
    ), False  # fmt: skip


def _may_reorder(
    runner: Runner,
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
    if not runner.within_grace(run, plan):
        return False
    return cannot_land or _wait_for_expiry(runner, run, plan)


# ---- pre-flight helpers ---------------------------------------------------------


def _wait_for_expiry(runner: Runner, run: RunRecord, plan: PlanRecord) -> bool:
    """For codes after which the old transaction might still land: wait until its
    blockhash has expired (if the slot's grace allows), so a fresh order cannot
    make two land."""
    if run.expires_at is None:
        return True
    wait = (run.expires_at - runner.clock()).total_seconds()
    if wait <= 0:
        return True
    grace_end = run.scheduled_for + timedelta(
        seconds=grace_of(plan, runner.config.runner.default_grace)
    )
    if run.expires_at >= grace_end:
        return False
    runner.book.event(run.id, "wait_for_expiry", {"seconds": round(wait, 3)})
    runner.sleep(wait)
    return True


def _settle(runner: Runner, run: RunRecord) -> RunRecord:
    return settle_unanswered(
        runner.book, run, rpc=runner.rpc, clock=runner.clock,
        validity=runner.config.runner.blockhash_validity,
    )  # fmt: skip
