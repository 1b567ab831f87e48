"""The two API steps of a run, by plan kind: ask for the order, post the signed one.

This is the only place that knows which endpoint serves which kind and which
wallet field the daemon fills in (`user` / `maker` / `taker`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from daemon.api.models import ExecuteResult, OrderResponse, Portfolio, UltraOrder
from daemon.plans.schema import RecurringRequest, SwapRequest, TriggerCancelRequest
from daemon.store.records import PlanRecord
from daemon.store.types import PlanKind
from daemon.txguard.expect import Expectation

Observer = Callable[[Any], None]


class OrderApi(Protocol):
    """The part of `daemon.api.client.JupiterClient` the runner uses."""

    def create_recurring_order(
        self, user: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> OrderResponse: ...
    def execute_recurring(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult: ...
    def cancel_trigger_order(
        self, maker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> OrderResponse: ...
    def execute_trigger(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult: ...
    def ultra_order(
        self, taker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> UltraOrder: ...
    def execute_ultra(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> ExecuteResult: ...
    def positions(
        self, address: str, platforms: Sequence[str] | None = None, observe: Observer | None = None
    ) -> Portfolio: ...


@dataclass(frozen=True)
class Ordered:
    request_id: str | None
    transaction: str | None
    order_account: str | None = None
    in_amount: int | None = None
    gasless: bool = False
    skip_reason: str | None = None
    skip_code: str | None = None


def order(api: OrderApi, plan: PlanRecord, wallet: str, observe: Observer) -> Ordered:
    """Ask the API for the unsigned transaction of this plan's run."""
    request = plan.request
    if isinstance(request, RecurringRequest):
        got = api.create_recurring_order(wallet, plan.body, observe)
        return Ordered(got.request_id, got.transaction, order_account=got.order)
    if isinstance(request, TriggerCancelRequest):
        got = api.cancel_trigger_order(wallet, plan.body, observe)
        return Ordered(got.request_id, got.transaction, order_account=request.order)
    quote = api.ultra_order(wallet, plan.body, observe)
    if not quote.transaction:
        code = quote.error_code
        reason = quote.error_message or "the API returned no transaction"
        return Ordered(
            quote.request_id or None, None,
            skip_reason=f"order not possible: {reason}" + (f" (errorCode {code})" if code else ""),
            skip_code=None if code is None else str(code),
        )  # fmt: skip
    return Ordered(
        quote.request_id, quote.transaction, in_amount=int(quote.in_amount),
        gasless=bool(quote.gasless),
    )  # fmt: skip


def execute(
    api: OrderApi, plan: PlanRecord, signed_tx: str, request_id: str, observe: Observer
) -> ExecuteResult:
    """Post the signed transaction to the kind's execute endpoint."""
    if plan.kind is PlanKind.RECURRING:
        return api.execute_recurring(signed_tx, request_id, observe)
    if plan.kind is PlanKind.TRIGGER_CANCEL:
        return api.execute_trigger(signed_tx, request_id, observe)
    return api.execute_ultra(signed_tx, request_id, observe)


def output_mint_of(plan: PlanRecord) -> str | None:
    request = plan.request
    return request.output_mint if isinstance(request, RecurringRequest | SwapRequest) else None


def expectation(plan: PlanRecord, input_mint: str | None, amount: int) -> Expectation:
    """What the plan asked for, as txguard holds the transaction to it: the kind,
    the mints, the most it may spend (`amount` of `input_mint`, from the pre-flight
    spend), the order a cancel closes and a swap's named receiver."""
    request = plan.request
    return Expectation(
        kind=str(plan.kind),
        input_mint=input_mint,
        output_mint=output_mint_of(plan),
        amount=amount or None,
        order=request.order if isinstance(request, TriggerCancelRequest) else None,
        receiver=request.receiver if isinstance(request, SwapRequest) else None,
    )
