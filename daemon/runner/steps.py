"""The two API steps of a run, by plan kind: ask for the order, post the signed one.

This is the only place that knows which endpoint serves which kind and which
wallet field the daemon fills in (`user` / `maker` / `taker`). A swap goes to
Swap V2 or to Ultra v1 (the plan's ``swap_api``, else ``api.swap_api``); the API
that took the order is recorded with it (`Ordered.detail`), so its execute goes
to the same API whatever the config says by then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from jupcron.api.models import ExecuteResult, OrderResponse, Portfolio, SwapOrder, UltraOrder
from jupcron.api.requests import SwapV2OrderRequest, UltraOrderRequest
from jupcron.config import Config
from jupcron.plans.schema import (
    RecurringRequest,
    SwapRequest,
    TriggerCancelRequest,
    TriggerV2DcaRequest,
    TriggerV2OrderRequest,
)
from jupcron.store.records import PlanRecord
from jupcron.store.types import PlanKind

Observer = Callable[[Any], None]
log = structlog.get_logger(__name__)


class OrderApi(Protocol):
    """The part of `jupcron.api.client.JupiterClient` the runner uses."""

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
    def swap_order(
        self, taker: str, request: Mapping[str, Any], observe: Observer | None = None
    ) -> SwapOrder: ...
    def execute_swap(
        self,
        signed_transaction: str,
        request_id: str,
        last_valid_block_height: int | None,
        observe: Observer | None = None,
    ) -> ExecuteResult: ...
    def positions(
        self, address: str, platforms: Sequence[str] | None = None, observe: Observer | None = None
    ) -> Portfolio: ...


SWAP_V2 = "swap-v2"
ULTRA_V1 = "ultra-v1"


def swap_api_of(config: Config, plan: PlanRecord) -> str:
    """The API a swap plan's next order goes to: the plan's choice, else the config's."""
    return plan.settings.swap_api or config.api.swap_api


@dataclass(frozen=True)
class SwapTerms:
    """What execute needs to know of a swap's order: the API that issued it and,
    from Swap V2, the order's ``lastValidBlockHeight``."""

    api: str = ULTRA_V1
    last_valid_block_height: int | None = None

    @classmethod
    def of(cls, steps: Sequence[tuple[str, dict[str, Any]]]) -> SwapTerms:
        """From a run's events: its latest order's (a run ordered before Swap V2
        support recorded no ``api``: Ultra v1 is what it used)."""
        found = cls()
        for step, detail in steps:
            if step == "ordered":
                height = detail.get("last_valid_block_height")
                found = cls(
                    api=str(detail.get("api") or ULTRA_V1),
                    last_valid_block_height=height if isinstance(height, int) else None,
                )
        return found


@dataclass(frozen=True)
class Ordered:
    request_id: str | None
    transaction: str | None
    order_account: str | None = None
    in_amount: int | None = None
    out_amount: int | None = None  # a swap's quote (outAmount)
    gasless: bool = False
    skip_reason: str | None = None
    skip_code: str | None = None
    swap: SwapTerms | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # Trigger V2: vault, deposit

    def detail(self) -> dict[str, Any]:
        """The order's facts for its ``ordered`` event (read back by `SwapTerms.of`)."""
        found: dict[str, Any] = {"request_id": self.request_id, "gasless": self.gasless}
        if self.swap is not None:
            found["api"] = self.swap.api
            if self.swap.last_valid_block_height is not None:
                found["last_valid_block_height"] = self.swap.last_valid_block_height
        return {**found, **self.extra}


def swap_body(plan: PlanRecord, exclude_routers: Sequence[str] = ()) -> Mapping[str, Any]:
    """A swap's order query: the plan's, with `exclude_routers` (the config's
    `api.exclude_routers`) joined to the plan's own ``excludeRouters``."""
    body = plan.body
    if not exclude_routers:
        return body
    own = [r for r in str(body.get("excludeRouters") or "").split(",") if r]
    routers = list(dict.fromkeys([*own, *exclude_routers]))
    return {**body, "excludeRouters": ",".join(routers)}


def swap_query(
    plan: PlanRecord, api: str, exclude_routers: Sequence[str] = ()
) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """The order query for `api` (`swap_body`), holding only the parameters that API's
    spec lists, and what was left out (``{"not_sent": [...]}`` for the ``ordered``
    event; empty when nothing was): a Swap-V2-only parameter never goes to Ultra, nor
    an Ultra-only one to Swap V2."""
    listed = SwapV2OrderRequest.params if api == SWAP_V2 else UltraOrderRequest.params
    body = swap_body(plan, exclude_routers)
    unsent = sorted(k for k in body if k not in listed)
    if not unsent:
        return body, {}
    log.warning("swap_params_not_sent", plan=plan.name, api=api, params=unsent)
    return {k: v for k, v in body.items() if k in listed}, {"not_sent": unsent}


def _swap_facts(answer: UltraOrder) -> dict[str, Any]:
    """What a swap's order answer says of its terms, for the guard (`runner.judge`)."""
    facts = {
        "fee_bps": answer.fee_bps, "slippage_bps": answer.slippage_bps,
        "router": answer.router, "swap_type": answer.swap_type,
        "out_amount": str(answer.out_amount),
    }  # fmt: skip
    return {k: v for k, v in facts.items() if v is not None}


def order(
    api: OrderApi,
    plan: PlanRecord,
    wallet: str,
    observe: Observer,
    swap_api: str = ULTRA_V1,
    exclude_routers: Sequence[str] = (),
) -> Ordered:
    """Ask the API for the unsigned transaction of this plan's run (a swap: from
    `swap_api`, `swap_api_of` the plan; Swap V2 never quoted by `exclude_routers`)."""
    request = plan.request
    if isinstance(request, RecurringRequest):
        got = api.create_recurring_order(wallet, plan.body, observe)
        return Ordered(got.request_id, got.transaction, order_account=got.order)
    if isinstance(request, TriggerCancelRequest):
        got = api.cancel_trigger_order(wallet, plan.body, observe)
        return Ordered(got.request_id, got.transaction, order_account=request.order)
    if swap_api == SWAP_V2:
        body, unsent = swap_query(plan, SWAP_V2, exclude_routers)
        v2 = api.swap_order(wallet, body, observe)
        terms = SwapTerms(SWAP_V2, v2.last_valid_block_height)
        if v2.skipped:
            code = v2.error_code
            return Ordered(
                v2.request_id or None, None, swap=terms,
                skip_code=None if code is None else str(code),
                skip_reason=f"order not possible: {v2.skip_reason}"
                + ("" if code is None else f" (errorCode {code})"),
                extra=unsent,
            )  # fmt: skip
        return Ordered(
            v2.request_id, v2.transaction, in_amount=_int(v2.in_amount),
            out_amount=_int(v2.out_amount), gasless=bool(v2.gasless), swap=terms,
            extra={**_swap_facts(v2), **unsent},
        )  # fmt: skip
    # Ultra's spec takes one excludeRouters value, and Ultra reads it as a manual-mode
    # parameter (ultra/gasless.mdx): the config's exclusions are Swap V2's; on Ultra a
    # third-party router's answer is refused by txguard (docs/products.md)
    body, unsent = swap_query(plan, ULTRA_V1)
    quote = api.ultra_order(wallet, body, observe)
    if not quote.transaction:
        code = quote.error_code
        reason = quote.error_message or "the API returned no transaction"
        return Ordered(
            quote.request_id or None, None,
            skip_reason=f"order not possible: {reason}" + (f" (errorCode {code})" if code else ""),
            skip_code=None if code is None else str(code), extra=unsent,
        )  # fmt: skip
    return Ordered(
        quote.request_id, quote.transaction, in_amount=int(quote.in_amount),
        out_amount=int(quote.out_amount), gasless=bool(quote.gasless), swap=SwapTerms(ULTRA_V1),
        extra={**_swap_facts(quote), **unsent},
    )  # fmt: skip


def _int(amount: str | None) -> int | None:
    return None if amount is None else int(amount)


def execute(
    api: OrderApi,
    plan: PlanRecord,
    signed_tx: str,
    request_id: str,
    observe: Observer,
    swap: SwapTerms | None = None,
) -> ExecuteResult:
    """Post the signed transaction to the kind's execute endpoint (a swap: to the API
    that issued its order, `swap`)."""
    if plan.kind is PlanKind.RECURRING:
        return api.execute_recurring(signed_tx, request_id, observe)
    if plan.kind is PlanKind.TRIGGER_CANCEL:
        return api.execute_trigger(signed_tx, request_id, observe)
    if swap is not None and swap.api == SWAP_V2:
        height = swap.last_valid_block_height
        return api.execute_swap(signed_tx, request_id, height, observe)
    return api.execute_ultra(signed_tx, request_id, observe)


def output_mint_of(plan: PlanRecord) -> str | None:
    request = plan.request
    if isinstance(request, RecurringRequest | SwapRequest):
        return request.output_mint
    if isinstance(request, TriggerV2DcaRequest | TriggerV2OrderRequest):
        return request.output_mint
    return None
