"""Posting a signed run to the execute endpoint, and settling it from the answer.

Only the first post of a run's bytes can prove that they did not land: an
answer to a re-post (after a crash or a lost answer) that is not a clear
result is settled from the chain (`rpc.url`) or marked ``in_doubt``, never by
a fresh order.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import structlog

from jupcron import failpoints
from jupcron.api.models import ExecuteResult
from jupcron.domain import RunStatus
from jupcron.errors import RejectedError, RetryableError
from jupcron.products.base import SwapTerms
from jupcron.products.registry import product
from jupcron.runner import expiry, results
from jupcron.runner.book import api_detail, api_fields
from jupcron.runner.ports import Ports
from jupcron.runner.settle import ask_chain, settle_from, settle_unanswered
from jupcron.runner.timing import grace_end, within_grace
from jupcron.store.records import PlanRecord, RunRecord

# Ultra / Swap V2 execute codes after which the transaction can no longer land (-1004:
# invalid block height, V2's answer to a lastValidBlockHeight passed): a fresh order is safe
CANNOT_LAND = frozenset({-1004, -1005, -2004})
# -1 (requestId unknown) proves nothing landed only on the first post of these bytes
# retryable codes where the old transaction might still land until its blockhash expires
MAY_STILL_LAND = frozenset({-1000, -1001, -2000, -2001})
# of those, "unknown error": the API's word says nothing of whether it landed; without
# an RPC node to ask, never followed by a fresh order (settled like a lost answer)
UNKNOWN_FATE = frozenset({-1001, -2001})
# the request-level refusals ("Ultra Endpoint Codes", ultra/response.mdx: -1 missing cached
# order, -2/-3 invalid signed transaction / message bytes, -4/-5 missing fields), answered
# as the specs' execute 400 ``{error, code}``, no status: the API took nothing of the post,
# so on the first post of these bytes nothing of them was sent and they cannot land
REFUSED_POST = frozenset({-1, -2, -3, -4, -5})


def execute(
    ports: Ports, run: RunRecord, plan: PlanRecord, reordered: bool
) -> tuple[RunRecord, bool]:
    """Post the stored signed transaction; settle the run from the answer. Returns the
    run, and whether it went back to `pending` for a fresh order.

    Only the first post of these bytes can prove that they did not land: an
    answer to a re-post (after a crash or a lost answer) that is not a clear
    result is settled by `settle_unanswered`, never by a fresh order."""
    book = ports.book
    # signed: nothing of these bytes was posted yet, and the SIGNED -> SUBMITTED move
    # below (a compare-and-set on this order) makes it this driver's first post: if
    # another driver moved the run first, `RunTakenOver` ends this drive, unposted
    first_post = run.status is RunStatus.SIGNED
    kind = product(plan.kind)
    swap = kind.terms(ports, run) if kind.terms is not None else None
    if first_post and swap is not None:  # a Swap V2 order's lastValidBlockHeight
        gone = expiry.cannot_land(ports, run, swap, ports.clock())
        if gone is not None:
            return expiry.expired_unposted(ports, run, plan, gone, ports.clock()), True
    if run.status is RunStatus.SIGNED:
        run = book.advance(run, RunStatus.SUBMITTED, expect=[RunStatus.SIGNED], step="submit")
    if run.signed_tx is None or run.request_id is None:
        return book.finish(
            run, RunStatus.IN_DOUBT, step="in_doubt",
            error="run marked signed but its signed transaction is not in the store",
        ), False  # fmt: skip
    with structlog.contextvars.bound_contextvars(
        request_id=run.request_id, signature=run.signature
    ):
        failpoints.hit("before_execute", plan.name)
        posts: list[Any] = []
        observe = book.observer(run.id)

        def count(attempt: Any) -> None:
            posts.append(attempt)
            observe(attempt)

        try:
            result = kind.execute(ports, run, plan, count, swap)
        except RetryableError as exc:
            # no answer: the transaction may or may not have landed; recovery settles it
            book.event(run.id, "execute_unanswered", api_detail(exc))
            return settle_unanswered(ports, run, ports.clock()), False
        except RejectedError as exc:
            if first_post and len(posts) <= 1:
                refused = book.finish(
                    run, RunStatus.FAILED, step="execute_refused",
                    detail=api_detail(exc), **api_fields(exc),
                )  # fmt: skip
                return refused, False
            book.event(run.id, "execute_refused_repost", api_detail(exc))
            return settle_unanswered(ports, run, ports.clock()), False
    first_post = first_post and len(posts) <= 1
    results.record(ports.book, run, result, ports.clock())  # every amount it returned
    failpoints.hit("after_execute", plan.name)
    return _answered(
        ports, run, plan, result, first_post=first_post, reordered=reordered, swap=swap
    )


def _answered(
    ports: Ports,
    run: RunRecord,
    plan: PlanRecord,
    result: ExecuteResult,
    *,
    first_post: bool,
    reordered: bool,
    swap: SwapTerms | None = None,
) -> tuple[RunRecord, bool]:
    """Settle the run from an execute answer (`swap`: its order's terms, if a swap)."""
    book = ports.book
    if result.succeeded:
        return record_result(ports, run, result, RunStatus.SUCCEEDED, step="executed"), False
    code = result.code
    fields = {"error_code": None if code is None else str(code), "error": result.error}
    if result.http_status is not None and result.http_status >= 500:
        # e.g. trigger's "unable to confirm transaction": it may still land
        book.event(run.id, "execute_unconfirmed", fields)
        return settle_unanswered(ports, run, ports.clock()), False
    if result.may_have_landed:
        # sent, fate unknown (-1006 timed out): the chain or a re-post of the same bytes
        # settles it; never failed (it may have spent the money), never a fresh order
        book.event(run.id, "execute_may_have_landed", {**fields, "meaning": result.meaning})
        return settle_unanswered(ports, run, ports.clock()), False
    if not first_post and (result.status is None or result.http_status != 200):
        # an error answer to a re-post says nothing about the first post's fate
        book.event(run.id, "execute_refused_repost", fields)
        return settle_unanswered(ports, run, ports.clock()), False
    if _may_reorder(ports, run, plan, code, reordered, first_post, swap):
        settled = _landed_meanwhile(ports, run) if code in MAY_STILL_LAND else None
        if settled is not None:
            return settled, False
        moved = book.advance(
            run, RunStatus.PENDING, expect=[RunStatus.SUBMITTED], step="reorder",
            detail={"reason": "execute failed, fresh order", **fields},
        )  # fmt: skip
        return moved, True
    if code in MAY_STILL_LAND and (ports.rpc is not None or code in UNKNOWN_FATE):
        # no fresh order, and the transaction may have landed all the same: the chain
        # (or the same bytes, in_doubt) settles it, never this answer alone
        book.event(run.id, "execute_may_still_land", {**fields, "meaning": result.meaning})
        return settle_unanswered(ports, run, ports.clock()), False
    if result.status is None:
        if first_post and code in REFUSED_POST:
            # refused, and no fresh order may follow (past the grace, or one already):
            # nothing was sent, a clean failure (not in_doubt)
            said = result.error or result.meaning
            return book.finish(
                run, RunStatus.FAILED, step="execute_refused", error_code=str(code),
                error=f"{said} (the first post of these bytes, refused: they never landed)",
            ), False  # fmt: skip
        # no result, and no refusal of the request: we cannot tell whether the bytes landed
        book.event(run.id, "execute_unknown_request", fields)
        return settle_unanswered(ports, run, ports.clock()), False
    return record_result(ports, run, result, RunStatus.FAILED, step="execute_failed"), False


def record_result(
    ports: Ports, run: RunRecord, result: ExecuteResult, status: RunStatus, *, step: str
) -> RunRecord:
    """The one way an execute answer reaches the store: the run's final row."""
    signature = result.signature or run.signature
    if status is RunStatus.SUCCEEDED:
        return ports.book.finish(
            run, status, step=step, signature=signature, slot=result.slot,
            out_amount=result.output_amount,
            in_amount=committed(run.in_amount, result.input_amount),
            order_account=result.order or run.order_account,
            detail={"slot": result.slot, "code": result.code},
        )  # fmt: skip
    code = result.code
    error = result.error or result.meaning  # the documented meaning when it says none
    return ports.book.finish(
        run, status, step=step, signature=signature, slot=result.slot,
        error_code=None if code is None else str(code), error=error,
    )  # fmt: skip


def committed(reserved: str | None, reported: str | None) -> str | None:
    """A succeeded run's input as its row keeps it (what the caps count): the amount it
    committed (its plan's, which txguard let the signed transaction spend at most), or
    the answer's ``totalInputAmount`` if larger. Never the answer's smaller figure: an
    API that understates it (UI units, a bug) must not free budget under a cap; what
    the route swapped is in the run's execute results."""
    if reserved is None or reported is None:
        return reserved or reported
    return str(max(int(reserved), int(reported)))


def _may_reorder(
    ports: Ports,
    run: RunRecord,
    plan: PlanRecord,
    code: int | str | None,
    reordered: bool,
    first_post: bool,
    swap: SwapTerms | None,
) -> bool:
    """A swap that failed with a retry-with-fresh-order code may be ordered again,
    once, inside the slot's grace, and only when the first transaction can no
    longer land."""
    if not product(plan.kind).reorders or reordered or not isinstance(code, int):
        return False
    cannot_land = code in CANNOT_LAND or (code == -1 and first_post)
    if not cannot_land and code not in MAY_STILL_LAND:
        return False
    if code in UNKNOWN_FATE and ports.rpc is None:
        return False  # nothing can say it did not land
    if not within_grace(run, plan, ports.clock()):
        return False
    return cannot_land or _wait_for_expiry(ports, run, plan, swap)


def _landed_meanwhile(ports: Ports, run: RunRecord) -> RunRecord | None:
    """After a may-still-land code and the wait for its blockhash to expire: the run
    settled from the chain when its first transaction landed (or the node cannot tell:
    then it stays `submitted`, or is `in_doubt`); None when a fresh order is safe (the
    node's whole word is "not there"; without a node, the API's "failed to land")."""
    if ports.rpc is None:
        return None
    status = ask_chain(ports, run)
    if status is not None and status.complete and not status.found:
        return None
    return settle_from(ports, run, status, ports.clock())


def _wait_for_expiry(
    ports: Ports, run: RunRecord, plan: PlanRecord, swap: SwapTerms | None
) -> bool:
    """For codes after which the old transaction might still land: wait, if the slot's
    grace allows, until it provably cannot land any more (`expiry.surely_gone`: the
    chain's block height past the Swap V2 order's ``lastValidBlockHeight`` when the RPC
    node can tell, else ``runner.blockhash_validity`` and its margin), so a fresh order
    cannot make two land. False when the grace ends first.

    The bare validity is only the expected expiry: at the order's time plus it the
    chain may not be past the order's height yet (its last block is still valid, and
    a slower chain takes longer), so a fresh order then could land beside the first."""
    validity = ports.config.runner.blockhash_validity
    end = grace_end(run, plan)
    step = validity / 30  # between looks at the height once the expected expiry passed
    while True:
        now = ports.clock()
        if expiry.surely_gone(ports, run, swap, now) is not None:
            return True
        if not expiry.heights_known(ports, swap) and run.expires_at is not None:
            wake = run.expires_at + timedelta(seconds=validity / 3)  # `surely_expired`
        elif run.expires_at is not None and now < run.expires_at:
            wake = run.expires_at  # the height cannot be expected past it before then
        else:
            wake = now + timedelta(seconds=step)
            step = min(step * 2, validity / 3)
        if wake >= end:
            return False
        wait = max((wake - now).total_seconds(), 0.001)
        ports.book.event(run.id, "wait_for_expiry", {"seconds": round(wait, 3)})
        ports.sleep(wait)
