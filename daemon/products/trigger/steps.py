"""A Trigger v1 cancel's run: ``cancelOrder`` (an order already closed is nothing to
do: the run is skipped), the guard's terms (only that order closes), and
``/trigger/v1/execute``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jupcron.api.models import ExecuteResult
from jupcron.products.base import Observer, Ordered, Product, SwapTerms, refusal_saying
from jupcron.products.trigger.model import SPEC, TriggerCancelRequest
from jupcron.txguard.expect import Expectation

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.runner.preflight import Spend
    from jupcron.store.records import PlanRecord, RunRecord

# what Trigger v1's cancelOrder answers (HTTP 400) for an order that is no longer open
GONE_TEXTS = ("no matching orders found",)


def order(ports: Ports, plan: PlanRecord, now: datetime, observe: Observer) -> Ordered:
    request = plan.request
    assert isinstance(request, TriggerCancelRequest)
    got = ports.api.cancel_trigger_order(ports.wallet.address, plan.body, observe)
    return Ordered(got.request_id, got.transaction, order_account=request.order)


def order_gone(plan: PlanRecord, exc: Exception) -> str | None:
    """The run's error when the cancel found its order already closed (filled,
    cancelled or expired): the plan's aim holds, so the run is `skipped`."""
    said = refusal_saying(exc, GONE_TEXTS)
    if said is None:
        return None
    order = plan.body.get("order") or "?"
    return (
        f"nothing to cancel: the API has no open order {order} of this wallet (filled, "
        f"cancelled or expired, or never this wallet's; it said: {said})"
    )


def expectation(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, TriggerCancelRequest)
    return Expectation(kind=str(plan.kind), order=request.order)


def execute(
    ports: Ports, run: RunRecord, plan: PlanRecord, observe: Observer, terms: SwapTerms | None
) -> ExecuteResult:
    return ports.api.execute_trigger(run.signed_tx or "", run.request_id or "", observe)


PRODUCT = Product(
    name="trigger", request=SPEC, order=order, expectation=expectation, execute=execute,
    order_gone=order_gone,
)  # fmt: skip
