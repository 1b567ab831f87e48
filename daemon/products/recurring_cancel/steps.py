"""A recurring order's cancel: ``cancelOrder`` (an order already closed is nothing
to do: the run is skipped), the guard's terms (the DCA program's ``close_dca`` of
only the order the plan names, refunding to our accounts), and ``/recurring/v1/execute``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jupcron.api.models import ExecuteResult
from jupcron.products.base import Observer, Ordered, Product, SwapTerms, refusal_saying
from jupcron.products.recurring_cancel.model import SPEC, RecurringCancelRequest
from jupcron.txguard.expect import Expectation

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.runner.preflight import Spend
    from jupcron.store.records import PlanRecord, RunRecord

# the API's answer (400) for an order account that holds no open order: a closed DCA
# account has no data left to read (the docs' failed example)
GONE_TEXTS = ("failed to deserialize account data",)


MAX_PAGES = 20  # of our open orders, looking for a pair's oldest


def order(ports: Ports, plan: PlanRecord, now: datetime, observe: Observer) -> Ordered:
    """The close of the plan's order, or of the oldest open order of its pair."""
    request = plan.request
    assert isinstance(request, RecurringCancelRequest)
    target = request.order or _oldest_open(ports, request, observe)
    if target is None:
        pair = f"{request.input_mint} -> {request.output_mint}"
        return Ordered(None, None, skip_reason=f"nothing to cancel: no open recurring order "
                       f"of ours on {pair}", skip_code="order_gone")  # fmt: skip
    got = ports.api.cancel_recurring_order(ports.wallet.address, request.wire(target), observe)
    return Ordered(got.request_id, got.transaction, order_account=target,
                   extra={"order": target})  # fmt: skip


def _oldest_open(ports: Ports, request: RecurringCancelRequest, observe: Observer) -> str | None:
    """Our oldest open (time-based) recurring order on the request's pair."""
    found: list[tuple[float, str]] = []
    for page in range(1, MAX_PAGES + 1):
        listed = ports.api.recurring_orders(
            ports.wallet.address, "active", page, observe, mint=request.input_mint
        )
        found += [
            (o.created_at.timestamp() if o.created_at else 0.0, o.order_key)
            for o in listed.orders
            if (o.input_mint, o.output_mint) == (request.input_mint, request.output_mint)
        ]
        if page >= listed.total_pages:
            break
    return min(found)[1] if found else None


def order_gone(plan: PlanRecord, exc: Exception) -> str | None:
    said = refusal_saying(exc, GONE_TEXTS)
    if said is None:
        return None
    return (
        f"nothing to cancel: no open recurring order {plan.body.get('order') or 'of the pair'} "
        f"(completed, cancelled, or never opened; the API said: {said})"
    )


def expectation(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, RecurringCancelRequest)
    chosen = ordered.get("order")
    # the order this run closes: the plan's, or the one its pair resolved to (none
    # recorded: "?" matches no order, so the guard refuses)
    target = request.order or (chosen if isinstance(chosen, str) else "?")
    return Expectation(kind=str(plan.kind), order=target, input_mint=request.input_mint,
                       output_mint=request.output_mint)  # fmt: skip


def execute(
    ports: Ports, run: RunRecord, plan: PlanRecord, observe: Observer, terms: SwapTerms | None
) -> ExecuteResult:
    return ports.api.execute_recurring(run.signed_tx or "", run.request_id or "", observe)


PRODUCT = Product(
    name="recurring-cancel", request=SPEC, order=order, expectation=expectation,
    execute=execute, order_gone=order_gone,
)  # fmt: skip
