"""A recurring order's cancel: ``cancelOrder`` (an order already closed is nothing
to do: the run is skipped), the guard's terms (the DCA program's ``close_dca`` of
only the order the plan names, refunding to our accounts), and ``/recurring/v1/execute``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from daemon.api.models import ExecuteResult
from daemon.errors import ApiRejectedError
from daemon.products.base import Observer, Ordered, Product, SwapTerms
from daemon.products.recurring_cancel.model import SPEC, RecurringCancelRequest
from daemon.txguard.expect import Expectation

if TYPE_CHECKING:
    from daemon.runner.ports import Ports
    from daemon.runner.preflight import Spend
    from daemon.store.records import PlanRecord, RunRecord

# the API's answer (400) for an order account that holds no open order: a closed DCA
# account has no data left to read (the docs' failed example)
GONE_TEXTS = ("failed to deserialize account data",)


def order(ports: Ports, plan: PlanRecord, now: datetime, observe: Observer) -> Ordered:
    request = plan.request
    assert isinstance(request, RecurringCancelRequest)
    got = ports.api.cancel_recurring_order(ports.wallet.address, plan.body, observe)
    return Ordered(got.request_id, got.transaction, order_account=request.order)


def order_gone(plan: PlanRecord, exc: Exception) -> str | None:
    if not isinstance(exc, ApiRejectedError):
        return None
    said = (exc.info.error or "").strip().lower()
    if exc.info.http_status != 400 or not any(text in said for text in GONE_TEXTS):
        return None
    return (
        f"nothing to cancel: no open recurring order {plan.body.get('order') or '?'} "
        f"(completed, cancelled, or never opened; the API said: {exc.info.error})"
    )


def expectation(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, RecurringCancelRequest)
    return Expectation(kind=str(plan.kind), order=request.order)


def execute(
    ports: Ports, run: RunRecord, plan: PlanRecord, observe: Observer, terms: SwapTerms | None
) -> ExecuteResult:
    return ports.api.execute_recurring(run.signed_tx or "", run.request_id or "", observe)


PRODUCT = Product(
    name="recurring-cancel", request=SPEC, order=order, expectation=expectation,
    execute=execute, order_gone=order_gone,
)  # fmt: skip
