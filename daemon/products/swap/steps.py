"""A swap's run, on Swap V2 or Ultra v1 (the plan's ``swap_api``, else ``api.swap_api``):
the order (each API sent only its own parameters), the guard's terms, and the execute
on the API that took the order (recorded with it, `SwapTerms`), whatever the config
says by then."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import structlog

from jupcron.api.models import ExecuteResult, UltraOrder
from jupcron.config import Config
from jupcron.products.base import Observer, Ordered, Product, SwapTerms
from jupcron.products.facts import fact_int, price_facts
from jupcron.products.swap.model import (
    SPEC,
    SWAP_V2,
    ULTRA_V1,
    SwapRequest,
    SwapV2OrderRequest,
    UltraOrderRequest,
)
from jupcron.txguard.expect import Expectation

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.runner.preflight import Spend
    from jupcron.store.records import PlanRecord, RunRecord

log = structlog.get_logger(__name__)


def swap_api_of(config: Config, plan: PlanRecord) -> str:
    """The API a swap plan's next order goes to: the plan's choice, else the config's."""
    return plan.settings.swap_api or config.api.swap_api


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
    """What a swap's order answer says of its terms, for the guard (`expectation`)."""
    facts = {
        "fee_bps": answer.fee_bps, "slippage_bps": answer.slippage_bps,
        "router": answer.router, "swap_type": answer.swap_type,
        "out_amount": None if answer.out_amount is None else str(answer.out_amount),
        "expire_at": answer.expire_at,  # an RFQ quote's expiry: `expiry.cannot_land`
    }  # fmt: skip
    return {k: v for k, v in facts.items() if v is not None}


def order(ports: Ports, plan: PlanRecord, now: datetime, observe: Observer) -> Ordered:
    """The unsigned swap from the plan's API (`swap_api_of`); Swap V2 never quoted by
    the config's `api.exclude_routers`."""
    wallet = ports.wallet.address
    if swap_api_of(ports.config, plan) == SWAP_V2:
        body, unsent = swap_query(plan, SWAP_V2, ports.config.api.exclude_routers)
        v2 = ports.api.swap_order(wallet, body, observe)
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
    quote = ports.api.ultra_order(wallet, body, observe)
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


def sent_priority_fee(request: SwapRequest, ordered: Mapping[str, Any]) -> int | None:
    """The plan's ``priorityFeeLamports`` when its order was sent it (a term of the
    run), else None: Ultra does not take it (`swap_query` left it out, ``not_sent`` in
    the ``ordered`` event), and a fee the API was never told of is no term of the order."""
    unsent = ordered.get("not_sent") or ()
    return None if "priorityFeeLamports" in unsent else request.priority_fee_lamports


def expectation(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, SwapRequest)
    account = request.referral_account
    referral = request.referral_fee if account else None
    return Expectation(
        kind=str(plan.kind), input_mint=spend.mint, output_mint=request.output_mint,
        amount=spend.amount or None, receiver=request.receiver,
        slippage_bps=request.slippage_bps, referral_fee_bps=referral,
        referral_account=str(account) if account else None,
        fee_bps=fact_int(ordered.get("fee_bps")), quoted_out=fact_int(ordered.get("out_amount")),
        priority_fee_lamports=sent_priority_fee(request, ordered), **price_facts(ordered),
    )  # fmt: skip


def terms(ports: Ports, run: RunRecord) -> SwapTerms:
    """The API that took this run's order (and Swap V2's block height), from its latest
    ``ordered`` event."""
    return SwapTerms.of([("ordered", ports.book.ordered(run.id))])


def execute(
    ports: Ports, run: RunRecord, plan: PlanRecord, observe: Observer, terms: SwapTerms | None
) -> ExecuteResult:
    """Post to the API that issued the order (`terms`)."""
    signed, request_id = run.signed_tx or "", run.request_id or ""
    if terms is not None and terms.api == SWAP_V2:
        height = terms.last_valid_block_height
        return ports.api.execute_swap(signed, request_id, height, observe)
    return ports.api.execute_ultra(signed, request_id, observe)


PRODUCT = Product(
    name="swap", request=SPEC, order=order, expectation=expectation, execute=execute,
    terms=terms, gasless=True, reorders=True, executed_fills=True,
)  # fmt: skip
