"""A batch of Trigger v1 cancels: ``cancelOrders`` for the plan's 1-5 orders (one
transaction; orders all already closed make the run skipped), the guard's terms
(Limit Order v2 ``cancel_order`` of only the named orders, refunding to us), and
``/trigger/v1/execute`` (as a single cancel's)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jupcron.errors import ApiErrorInfo, ApiRejectedError
from jupcron.products.base import Observer, Ordered, Product, refusal_saying
from jupcron.products.trigger.steps import GONE_TEXTS, execute
from jupcron.products.trigger_batch.model import SPEC, TriggerCancelBatchRequest
from jupcron.txguard.expect import Expectation

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.runner.preflight import Spend
    from jupcron.store.records import PlanRecord


def order(ports: Ports, plan: PlanRecord, now: datetime, observe: Observer) -> Ordered:
    request = plan.request
    assert isinstance(request, TriggerCancelBatchRequest)
    got = ports.api.cancel_trigger_orders(ports.wallet.address, plan.body, observe)
    if len(got.transactions) != 1:
        said = f"{len(got.transactions)} transactions for {len(request.orders)} orders"
        info = ApiErrorInfo(operation="cancel_trigger_orders", error=said)
        raise ApiRejectedError(f"cancel_trigger_orders: {said}; a run signs one", info)
    first = request.orders[0] if len(request.orders) == 1 else None
    return Ordered(got.request_id, got.transactions[0], order_account=first,
                   extra={"orders": list(request.orders)})  # fmt: skip


def order_gone(plan: PlanRecord, exc: Exception) -> str | None:
    """None of the named orders is open (filled, cancelled or expired): the run is
    `skipped`, the plan's aim holds."""
    said = refusal_saying(exc, GONE_TEXTS)
    if said is None:
        return None
    orders = ", ".join(plan.body.get("orders") or ()) or "?"
    return f"nothing to cancel: no open order among {orders} (the API said: {said})"


def expectation(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, TriggerCancelBatchRequest)
    return Expectation(kind=str(plan.kind), orders=tuple(request.orders))


PRODUCT = Product(
    name="trigger-cancel-batch", request=SPEC, order=order, expectation=expectation,
    execute=execute, order_gone=order_gone,
)  # fmt: skip
