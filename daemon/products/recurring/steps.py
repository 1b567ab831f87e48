"""A recurring (time-based) order's run: ``createOrder``, the guard's terms (the DCA
program's ``open_dca_v2``), and ``/recurring/v1/execute``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from jupcron.api.models import ExecuteResult
from jupcron.products.base import Observer, Ordered, Product, SwapTerms
from jupcron.products.facts import price_facts
from jupcron.products.recurring.model import SPEC, RecurringRequest
from jupcron.txguard.expect import Expectation, RecurringTerms

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.runner.preflight import Spend
    from jupcron.store.records import PlanRecord, RunRecord


def order(ports: Ports, plan: PlanRecord, now: datetime, observe: Observer) -> Ordered:
    got = ports.api.create_recurring_order(ports.wallet.address, plan.body, observe)
    return Ordered(got.request_id, got.transaction, order_account=got.order)


def expectation(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, RecurringRequest)
    time = request.params.time
    terms = None
    if time is not None:
        terms = RecurringTerms(
            in_amount=time.in_amount, per_cycle=time.in_amount // time.number_of_orders,
            cycle_seconds=time.interval, min_price=time.min_price, max_price=time.max_price,
            start_at=time.start_at,
        )  # fmt: skip
    price = price_facts(ordered)
    price.pop("reference_out", None)  # a price over days to come: only the plan's limit holds
    return Expectation(
        kind=str(plan.kind), input_mint=spend.mint, output_mint=request.output_mint,
        amount=spend.amount or None, recurring=terms,
        recurring_by_price=request.params.price is not None, **price,
    )  # fmt: skip


def execute(
    ports: Ports, run: RunRecord, plan: PlanRecord, observe: Observer, terms: SwapTerms | None
) -> ExecuteResult:
    return ports.api.execute_recurring(run.signed_tx or "", run.request_id or "", observe)


PRODUCT = Product(
    name="recurring", request=SPEC, order=order, expectation=expectation, execute=execute
)
