"""Keeps every execute answer that carries a result (status Success or Failed,
landed or not): its amounts, slot, signature, swap events and the raw body.
Called once per answer, from where the runner receives it; the result is
committed with the state change the answer leads to (one transaction), so a
crash or a store outage before that loses it with the state change, and
recovery re-posts the same transaction and records the answer then."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jupcron.runner.book import RunBook
from jupcron.store.port import ExecuteValues, SwapEventValues
from jupcron.store.records import RunRecord


def values_of(run: RunRecord, result: Any, now: datetime) -> ExecuteValues | None:
    """The result to store, or ``None`` when the answer has no result at all
    (e.g. Ultra's ``-1``: the request was not found, nothing was decided)."""
    status = getattr(result, "status", None)
    signature = getattr(result, "signature", None) or run.signature
    if status is None or not signature:
        return None
    code = getattr(result, "code", None)
    events = tuple(
        SwapEventValues(
            input_mint=e.input_mint,
            input_amount=e.input_amount,
            output_mint=e.output_mint,
            output_amount=e.output_amount,
            amm=getattr(e, "amm", None),
        )
        for e in getattr(result, "swap_events", None) or ()
    )
    raw = getattr(result, "raw", None)
    return ExecuteValues(
        run_id=run.id, signature=signature, recorded_at=now,
        operation=str(getattr(result, "operation", "") or "execute"),
        status=str(status), code=None if code is None else str(code),
        http_status=getattr(result, "http_status", None), slot=getattr(result, "slot", None),
        error=getattr(result, "error", None), order_account=getattr(result, "order", None),
        total_input_amount=getattr(result, "input_amount", None),
        total_output_amount=getattr(result, "output_amount", None),
        input_amount_result=getattr(result, "input_amount_result", None),
        output_amount_result=getattr(result, "output_amount_result", None),
        answer=dict(raw) if isinstance(raw, dict) else {}, swap_events=events,
    )  # fmt: skip


def record(book: RunBook, run: RunRecord, result: Any, now: datetime) -> None:
    values = values_of(run, result, now)
    if values is not None:
        book.keep_result(run.id, values)
