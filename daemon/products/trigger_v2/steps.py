"""The Trigger V2 steps of a run (docs/products.md), for its three kinds.

    order     login if needed (txguard checks the challenge), the vault, then the
              deposit craft (DCA, price order) or the cancel (the withdrawal)
    sign      as every run: txguard holds the transaction to `expectation`
    execute   create (``/orders/dca``, ``/orders/price``) with the signed deposit,
              or confirm-cancel with the signed withdrawal

The create and confirm-cancel bodies are identical on every post: the create's is
built once, when the deposit is crafted, and kept in the run's ``ordered`` event (a
plan edited after that does not change what the signed deposit opens). A post the
API refuses or leaves unanswered is settled from the history first: an order
whose ``deposit`` (create) or ``withdrawal`` (cancel) event carries this run's
signature proves it done. A refusal (4xx) of a post that reached the API is then
settled from the chain when ``rpc.url`` is set (`LandingUnknown`): the API held our
signed bytes, so only the chain (or the blockhash's expiry) shows that nothing
moved. Otherwise the error goes on to the run's usual settling
(`jupcron.runner.submit`): failed on a first post, else the chain or ``in_doubt``.
A price order's ``200`` with ``depositConfirmed: false`` is settled from the chain
as well: it says the deposit has not been seen landing; so is a ``200`` naming a
``txSignature`` other than ours (it does not say ours landed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import structlog

from jupcron.api.client import Observer
from jupcron.api.http import Attempt
from jupcron.api.models import ExecuteResult
from jupcron.api.trigger_v2 import TriggerV2Api
from jupcron.api.trigger_v2_models import Created, Family, HistoryOrder
from jupcron.errors import (
    ApiRejectedError,
    JupcronError,
    RejectedError,
    RetryableError,
)
from jupcron.products.base import Ordered, Product, SwapTerms, refusal_saying
from jupcron.products.trigger_v2 import landing, spec
from jupcron.products.trigger_v2.checks import expires_at_ms
from jupcron.products.trigger_v2.model import (
    BEGIN_FILL_MAX,
    TriggerV2CancelRequest,
    TriggerV2DcaRequest,
    TriggerV2OrderRequest,
)
from jupcron.scheduling.schedule import parse_instant
from jupcron.txguard.expect import Expectation

if TYPE_CHECKING:
    from jupcron.runner.ports import Ports
    from jupcron.runner.preflight import Spend
    from jupcron.store.records import PlanRecord, RunRecord

log = structlog.get_logger(__name__)

MAX_HISTORY_PAGES = 20  # how far back (x100 orders) a settle or an order look-up reads


class TriggerV2Unavailable(RejectedError):
    """Trigger V2 plans need the daemon's Jupiter client; this runner has none."""


def _api(ports: Ports) -> TriggerV2Api:
    if ports.trigger_v2 is None:
        raise TriggerV2Unavailable
    return ports.trigger_v2


def family_of(plan: PlanRecord) -> Family:
    request = plan.request
    if isinstance(request, TriggerV2CancelRequest):
        return "dca" if request.family == "dca" else "price"
    return "dca" if isinstance(request, TriggerV2DcaRequest) else "price"


# --- order ---------------------------------------------------------------------------


def order(ports: Ports, plan: PlanRecord, now: datetime, observe: Observer) -> Ordered:
    """The unsigned deposit (DCA, price order) or withdrawal (cancel) of this run."""
    api, request = _api(ports), plan.request
    if isinstance(request, TriggerV2CancelRequest):
        return _cancel(api, request, _vault(ports, api, observe), observe)
    if not isinstance(request, TriggerV2DcaRequest | TriggerV2OrderRequest):
        raise TypeError(f"not a Trigger V2 request: {type(request).__name__}")
    reason = _too_late_or_early(request, now)
    if reason is not None:
        return Ordered(None, None, skip_reason=reason)
    vault = _vault(ports, api, observe)
    body: dict[str, Any] = {"inputMint": request.input_mint, "outputMint": request.output_mint,
                            "amount": str(request.input_amount)}  # fmt: skip
    if isinstance(request, TriggerV2DcaRequest):
        body["orderType"] = "dca"
    else:
        body.update(orderType="price", orderSubType="single")
    deposit = api.craft_deposit(body, observe)
    detail: dict[str, Any] = {
        "vault": vault,
        "owner": api.wallet,  # whose vault it is: the pin of the wallet's later sessions
        "deposit": [deposit.receiver_address, deposit.mint, deposit.amount],
        "deposit_account": deposit.input_token_account,
    }
    if isinstance(request, TriggerV2OrderRequest):
        detail["expires_at"] = expires_at_ms(request, now)  # the same on every post
    detail["create"] = _storable(create_body(request, detail))  # the claimed terms
    return Ordered(deposit.request_id, deposit.transaction, in_amount=request.input_amount,
                   extra=detail)  # fmt: skip


def _too_late_or_early(
    request: TriggerV2DcaRequest | TriggerV2OrderRequest, now: datetime
) -> str | None:
    if isinstance(request, TriggerV2OrderRequest):
        if request.expires_at is not None and request.expires_at <= now.timestamp() * 1000:
            return "the order's expiresAt has passed: nothing to place"
        return None
    if request.begin_fill_at is None:
        return None
    begin = parse_instant(request.begin_fill_at)
    if begin <= now:
        return f"beginFillAt {request.begin_fill_at} has passed (it must be in the future)"
    if begin > now + BEGIN_FILL_MAX:
        return f"beginFillAt {request.begin_fill_at} is more than 30 days ahead"
    return None


# an order's states in its history with nothing left in the vault to withdraw (an
# expired or failed price order still holds its deposit: its cancel is the withdrawal)
CLOSED: dict[Family, tuple[str, ...]] = {
    "dca": ("completed", "cancelled", "deposit_failed"),
    "price": ("filled", "cancelled", "deposit_failed"),  # the last: its raw state
}


def _vault(ports: Ports, api: TriggerV2Api, observe: Observer) -> str:
    """The wallet's vault as the API names it, held to the one its signed runs paid: the
    store is asked once per session (a restarted daemon, each `jupcron fire`), so an
    answer naming another vault is refused even in a session's first run. The vault is
    Jupiter's custodial account, not derived from the wallet: txguard cannot prove it
    ours, only that it is the one named."""
    if not api.recalled:
        api.recall(ports.store.trigger_v2_vault(ports.wallet_name, api.wallet))
    return api.vault(observe)


def _cancel(
    api: TriggerV2Api, request: TriggerV2CancelRequest, vault: str, observe: Observer
) -> Ordered:
    family: Family = "dca" if request.family == "dca" else "price"
    known = find_order(api, family, request.order, observe)
    if known is None:
        raise ApiRejectedError(
            f"trigger_v2_cancel: order {request.order} is not in this wallet's {family} "
            "history: nothing of ours to cancel"
        )
    closed = known.state if family == "dca" else known.order_state
    if family == "price" and known.raw_state == "deposit_failed":
        closed = known.raw_state  # shown "failed": its deposit never reached the vault
    if closed in CLOSED[family]:  # the plan's aim holds: nothing to craft or sign
        return Ordered(None, None, order_account=request.order, skip_code="order_gone",
                       skip_reason=f"nothing to cancel: order {request.order} is already "
                                   f"{closed}")  # fmt: skip
    held = known.vault_pubkey or known.privy_wallet_pubkey
    if held is not None and held != vault:
        raise ApiRejectedError(
            f"trigger_v2_cancel: order {request.order} is held by {held}, not our vault {vault}"
        )
    craft = api.cancel(family, request.order, observe)
    if craft.id != request.order:
        raise ApiRejectedError(
            f"trigger_v2_cancel: the answer is for order {craft.id}, not {request.order}"
        )
    detail = {
        "vault": vault,
        "owner": api.wallet,
        "order": request.order,  # what the withdrawal is for, whatever the plan says later
        "family": family,
        "input_mint": known.input_mint,
        "output_mint": known.output_mint,
        "refund_amount": craft.refund_amount,
        "rounds_remaining": craft.rounds_remaining,
    }
    return Ordered(craft.request_id, craft.transaction, order_account=request.order,
                   extra=detail)  # fmt: skip


def order_gone(plan: PlanRecord, exc: Exception) -> str | None:
    """A cancel whose order closed between its history look-up and the cancel call (a
    DCA's last round filled meanwhile): the API refuses with 400 "Cannot cancel DCA
    order in '<state>' state" (docs/products.md). The plan's aim holds when that state
    is a closed one (`CLOSED`), so the run is `skipped`, as when the look-up saw it
    closed; any other state (``depositing``, ``withdrawing``) still fails the run."""
    request = plan.request
    if not isinstance(request, TriggerV2CancelRequest):
        return None
    said = refusal_saying(exc, ("cannot cancel dca order in",))
    state = None if said is None else _quoted(said)
    if state is None or state not in CLOSED["dca"]:
        return None
    return f"nothing to cancel: order {request.order} is already {state} (the API said: {said})"


def _quoted(said: str) -> str | None:
    """The state a "... in '<state>' state" refusal names, lower case."""
    parts = said.split("'")
    return parts[1].strip().lower() if len(parts) >= 3 else None


# --- what txguard holds the transaction to -------------------------------------------


def expectation(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    """The deposit: the plan's mint and amount, into the vault ``GET /vault`` named,
    with what the craft said of itself. The withdrawal: the vault, and the order's
    mints (so the wallet's token accounts for them are known)."""
    vault = ordered.get("vault")
    vault = vault if isinstance(vault, str) else None
    if isinstance(plan.request, TriggerV2CancelRequest):
        return Expectation(
            kind=str(plan.kind), input_mint=_text(ordered.get("input_mint")),
            output_mint=_text(ordered.get("output_mint")), vault=vault,
        )  # fmt: skip
    said = ordered.get("deposit")
    deposit = tuple(str(x) for x in said) if isinstance(said, list) and len(said) == 3 else None
    request = plan.request
    output = (
        request.output_mint
        if isinstance(request, TriggerV2DcaRequest | TriggerV2OrderRequest)
        else None
    )
    return Expectation(
        kind=str(plan.kind), input_mint=spend.mint, output_mint=output,
        amount=spend.amount or None,
        vault=vault, deposit=deposit,  # type: ignore[arg-type]
    )  # fmt: skip


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# --- execute -------------------------------------------------------------------------


def create_body(
    request: TriggerV2DcaRequest | TriggerV2OrderRequest, ordered: Mapping[str, Any]
) -> dict[str, Any]:
    """The create body, minus the wallet and the deposit (the API client adds them)."""
    body: dict[str, Any] = {"inputMint": request.input_mint, "outputMint": request.output_mint,
                            "inputAmount": str(request.input_amount)}  # fmt: skip
    if isinstance(request, TriggerV2DcaRequest):
        body.update(orderCount=request.order_count, intervalSeconds=request.interval_seconds,
                    orderType=request.order_type)  # fmt: skip
        for key, value in (("minPriceUsd", request.min_price_usd),
                           ("maxPriceUsd", request.max_price_usd)):  # fmt: skip
            if value is not None:
                body[key] = value  # a Decimal: sent as the exact JSON number
        if request.trigger_mint is not None:
            body["triggerMint"] = request.trigger_mint
        if request.begin_fill_at is not None:
            body["beginFillAt"] = request.begin_fill_at
        return body
    body.update(orderType="single", triggerMint=request.trigger_mint,
                triggerCondition=request.trigger_condition,
                expiresAt=int(ordered["expires_at"]))  # fmt: skip
    if request.trigger_price_usd is not None:
        body["triggerPriceUsd"] = request.trigger_price_usd
    if request.trailing_bps is not None:
        body["trailingBps"] = request.trailing_bps
    if request.slippage_bps is not None:
        body["slippageBps"] = request.slippage_bps
    return body


PRICE_FIELDS = ("minPriceUsd", "maxPriceUsd", "triggerPriceUsd")  # exact JSON numbers


def _storable(body: Mapping[str, Any]) -> dict[str, Any]:
    """A create body for the ``ordered`` event (JSON): its prices as text."""
    return {k: str(v) if isinstance(v, Decimal) else v for k, v in body.items()}


def _stored_body(
    request: TriggerV2DcaRequest | TriggerV2OrderRequest, ordered: Mapping[str, Any]
) -> dict[str, Any]:
    """The create body the run was ordered with (its prices as exact numbers again);
    built from the plan only for a run ordered before the body was kept."""
    stored = ordered.get("create")
    if not isinstance(stored, dict):
        return create_body(request, ordered)
    return {k: Decimal(v) if k in PRICE_FIELDS and isinstance(v, str) else v
            for k, v in stored.items()}  # fmt: skip


def execute(
    ports: Ports, run: RunRecord, plan: PlanRecord, observe: Observer, terms: SwapTerms | None
) -> ExecuteResult:
    """Post the signed deposit (create) or withdrawal (confirm-cancel). Only the post's
    own attempts reach `observe` (what the runner counts as posts of the bytes); a
    login on the way is booked apart."""
    api, request, family = _api(ports), plan.request, family_of(plan)
    signed, request_id, signature = run.signed_tx or "", run.request_id or "", run.signature or ""
    order_id: str | None = None  # a cancel's: the order its withdrawal was crafted for
    if isinstance(request, TriggerV2CancelRequest):
        operation, event = "trigger_v2_confirm_cancel", "withdrawal"
        order_id, family = _withdrawn(ports, run, request, family)
    else:
        operation, event = f"trigger_v2_create_{family}", "deposit"
    # the look-up and a login are not posts of the transaction: booked apart from `observe`
    looked = ports.book.observer(run.id)
    posted: list[Attempt] = []

    def posts(attempt: Attempt) -> None:
        if attempt.operation == operation:
            posted.append(attempt)
        (observe if attempt.operation == operation else looked)(attempt)

    try:
        if order_id is not None:
            created = api.confirm_cancel(family, order_id, signed, request_id, posts)
        elif isinstance(request, TriggerV2DcaRequest | TriggerV2OrderRequest):
            body = _stored_body(request, ports.book.ordered(run.id))
            created = api.create(family, body, request_id, signed, posts)
        else:
            raise TypeError(f"not a Trigger V2 request: {type(request).__name__}")
    except (ApiRejectedError, RetryableError) as exc:
        found = _settle_from_history(api, family, event, signature, order_id, looked)
        chain_tells = bool(posted) and ports.rpc is not None
        if found is None and isinstance(exc, ApiRejectedError) and chain_tells:
            # the API held our signed bytes: the chain, not its refusal, settles the run
            raise landing.LandingUnknown(str(exc), exc.info) from exc
        if found is None:
            raise
        detail = {"order": found.id, "event": event, "after": type(exc).__name__}
        ports.book.event(run.id, "settled_by_history", detail)
        created = Created(id=found.id, tx_signature=signature)
    if created.deposit_confirmed is False:
        landing.unconfirmed(ports, run, operation, created)
    if created.tx_signature != signature:
        landing.misreported(ports, run, operation, created, signature, order_id)
    # a cancel is about the order its withdrawal was for, whatever id the answer carries
    result = ExecuteResult.model_validate(
        {"operation": operation, "httpStatus": 200, "status": "Success",
         "signature": signature, "order": order_id or created.id}
    )  # fmt: skip
    return result.model_copy(update={"raw": created.model_dump(by_alias=True, exclude_none=True)})


def _withdrawn(
    ports: Ports, run: RunRecord, request: TriggerV2CancelRequest, family: Family
) -> tuple[str, Family]:
    """The order (and its family) a cancel run's signed withdrawal was crafted for: its
    ``ordered`` event's, else the run's order account. Not the plan's as it is now: a
    run resumed after ``plans apply`` edited the plan (recovery hands it the plan as the
    store has it) must confirm its own withdrawal, not post it for another order."""
    ordered = ports.book.ordered(run.id)
    order, said = ordered.get("order"), ordered.get("family")
    if not isinstance(order, str) or not order:
        order = run.order_account or request.order
    if said in ("dca", "price"):
        family = "dca" if said == "dca" else "price"
    return order, family


def _settle_from_history(
    api: TriggerV2Api,
    family: Family,
    event: str,
    signature: str,
    order_id: str | None,
    observe: Observer,
) -> HistoryOrder | None:
    """The order whose `event` carries `signature`, if the history shows one."""
    if not signature:
        return None
    try:
        for page in _pages(api, family, observe):
            for item in page:
                if (order_id is None or item.id == order_id) and item.event_with(event, signature):
                    return item
    except JupcronError as exc:
        log.warning("trigger_v2_history_unreadable", error=str(exc))
    return None


def find_order(
    api: TriggerV2Api, family: Family, order_id: str, observe: Observer
) -> HistoryOrder | None:
    """The wallet's order `order_id`, from its history (active first, then past)."""
    for page in _pages(api, family, observe):
        for item in page:
            if item.id == order_id:
                return item
    return None


def _pages(api: TriggerV2Api, family: Family, observe: Observer) -> Iterator[list[HistoryOrder]]:
    for state in ("active", "past"):
        offset = 0
        for _ in range(MAX_HISTORY_PAGES):
            page = api.history(family, state, offset, observe)
            yield page.orders
            offset += len(page.orders)
            if not page.orders or offset >= page.total:
                break


DCA = Product(name="trigger-v2-dca", request=spec.DCA, order=order, expectation=expectation,
              execute=execute)  # fmt: skip
ORDER = Product(name="trigger-v2-order", request=spec.ORDER, order=order,
                expectation=expectation, execute=execute)  # fmt: skip
CANCEL = Product(name="trigger-v2-cancel", request=spec.CANCEL, order=order,
                 expectation=expectation, execute=execute, order_gone=order_gone)  # fmt: skip
