"""The two API steps of a run, by plan kind: ask for the order, post the signed one.

This is the only place that knows which endpoint serves which kind and which
wallet field the daemon fills in (`user` / `maker` / `taker`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from daemon.store.records import PlanRecord
from daemon.store.types import PlanKind
from daemon.txguard.expect import Expectation

Observer = Callable[[Any], None]


class OrderResponseLike(Protocol):
    request_id: str
    transaction: str
    order: str | None


class UltraOrderLike(Protocol):
    request_id: str
    transaction: str | None
    in_amount: str
    out_amount: str
    gasless: bool
    error_code: int | None
    error_message: str | None


class ExecuteResultLike(Protocol):
    http_status: int | None
    status: str | None
    code: int | str | None
    signature: str | None
    slot: int | None
    error: str | None
    order: str | None
    input_amount: str | None
    output_amount: str | None

    @property
    def succeeded(self) -> bool: ...


class OrderApi(Protocol):
    """The part of `daemon.api.client.JupiterClient` the runner uses."""

    def create_recurring_order(
        self, user: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> Any: ...
    def execute_recurring(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> Any: ...
    def cancel_trigger_order(
        self, maker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> Any: ...
    def execute_trigger(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> Any: ...
    def ultra_order(
        self, taker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> Any: ...
    def execute_ultra(
        self, signed_transaction: str, request_id: str, observe: Observer | None = None
    ) -> Any: ...
    def positions(
        self, address: str, platforms: Sequence[str] | None = None, observe: Observer | None = None
    ) -> Any: ...


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
    if plan.kind is PlanKind.RECURRING:
        got: OrderResponseLike = api.create_recurring_order(wallet, request, observe)
        return Ordered(got.request_id, got.transaction, order_account=got.order)
    if plan.kind is PlanKind.TRIGGER_CANCEL:
        got = api.cancel_trigger_order(wallet, request, observe)
        return Ordered(got.request_id, got.transaction, order_account=request.get("order"))
    quote: UltraOrderLike = api.ultra_order(wallet, request, observe)
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
) -> ExecuteResultLike:
    """Post the signed transaction to the kind's execute endpoint."""
    if plan.kind is PlanKind.RECURRING:
        result: ExecuteResultLike = api.execute_recurring(signed_tx, request_id, observe)
    elif plan.kind is PlanKind.TRIGGER_CANCEL:
        result = api.execute_trigger(signed_tx, request_id, observe)
    else:
        result = api.execute_ultra(signed_tx, request_id, observe)
    return result


def expectation(plan: PlanRecord, input_mint: str | None, amount: int) -> Expectation:
    """What the plan asked for, as txguard holds the transaction to it: the kind,
    the mints, the most it may spend (`amount` of `input_mint`, from the pre-flight
    spend), the order a cancel closes and a swap's named receiver."""
    request = plan.request
    receiver = request.get("receiver") if plan.kind is PlanKind.SWAP else None
    return Expectation(
        kind=str(plan.kind),
        input_mint=input_mint,
        output_mint=request.get("outputMint"),
        amount=amount or None,
        order=request.get("order") if plan.kind is PlanKind.TRIGGER_CANCEL else None,
        receiver=str(receiver) if receiver else None,
    )
