"""Typed pages of ``GET /recurring/v1/getRecurringOrders`` and
``GET /trigger/v1/getTriggerOrders`` (docs/fills-api.md has the shapes and
their sources), and Tokens V2 ``/search`` entries.

A page is parsed item by item: one malformed order or trade becomes a
`problem` of the page (with the order key when it can be read), the rest is
kept. The follower decides what a problem means; nothing here guesses a value.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictStr,
    ValidationError,
)
from pydantic.alias_generators import to_camel

from jupcron.api.models import Amount
from jupcron.api.times import from_iso, from_unix

U64_MAX = 2**64 - 1  # a token amount is a u64
# the longest the store keeps (`jupcron.store.models`: PUBKEY, a signature's column, a
# status): a longer value is no Solana key, signature or status but garbage, a problem
# of its order; stored, PostgreSQL's VARCHAR(n) would refuse it and the page with it
ADDRESS_CHARS = 64
SIGNATURE_CHARS = 100
LABEL_CHARS = 32


def _when(value: Any) -> Any:
    """An ISO 8601 time as the API sends it (``...Z``); naive means UTC."""
    if isinstance(value, str):
        return from_iso(value)
    raise ValueError("a time must be an ISO 8601 string")


def _text_or_none(value: Any) -> Any:
    """``closeTx`` is ``null`` in the spec and ``""`` in older examples: both mean none."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        return value.strip()
    raise ValueError("must be a string or null")


def _u64(value: str) -> str:
    """An amount no token account can hold is garbage, not a number to store."""
    if int(value) > U64_MAX:
        raise ValueError("an amount beyond u64")
    return value


def _when_any(value: Any) -> Any:
    """``expiredAt``: unix seconds (the create call takes them) or an ISO time; one out
    of range (or infinite) is a problem of its order, as any unreadable field is."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return from_unix(value)
    if isinstance(value, str) and value.strip().isdigit():
        return from_unix(int(value.strip()))
    return _when(value)


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _maybe_when(value: Any) -> Any:
    return None if value in (None, "") else _when_any(value)


When = Annotated[datetime, BeforeValidator(_when)]
MaybeWhen = Annotated[datetime | None, BeforeValidator(_maybe_when)]
OptionalTx = Annotated[
    str | None, Field(max_length=SIGNATURE_CHARS), BeforeValidator(_text_or_none)
]
Key = Annotated[StrictStr, Field(min_length=1, max_length=ADDRESS_CHARS), BeforeValidator(_strip)]
TxId = Annotated[
    StrictStr, Field(min_length=1, max_length=SIGNATURE_CHARS), BeforeValidator(_strip)
]
Label = Annotated[StrictStr, Field(min_length=1, max_length=LABEL_CHARS), BeforeValidator(_strip)]
MaybeAddress = Annotated[str | None, Field(max_length=ADDRESS_CHARS)]
MaybeLabel = Annotated[str | None, Field(max_length=LABEL_CHARS)]
Raw = Annotated[Amount, AfterValidator(_u64)]


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="ignore", frozen=True, populate_by_name=True, alias_generator=to_camel
    )


class Trade(_Model):
    """One entry of an order's ``trades[]`` (the same shape for both products)."""

    order_key: Key
    input_mint: Key
    output_mint: Key
    raw_input_amount: Raw
    raw_output_amount: Raw
    tx_id: TxId
    confirmed_at: When
    action: Label
    keeper: MaybeAddress = None
    fee_mint: MaybeAddress = None
    raw_fee_amount: Raw | None = None


class ListedOrder(_Model):
    """The fields we use of a recurring (time) or trigger order listing.

    Recurring: ``rawInDeposited``, ``rawInUsed``, ``rawOutReceived``,
    ``rawInWithdrawn``, ``userClosed``. Trigger: ``rawMakingAmount``,
    ``rawRemainingMakingAmount``, ``status``, ``expiredAt``."""

    order_key: Key
    input_mint: Key
    output_mint: Key
    open_tx: OptionalTx = None
    close_tx: OptionalTx = None
    created_at: When | None = None
    updated_at: When | None = None
    # recurring
    raw_in_deposited: Raw | None = None
    raw_in_used: Raw | None = None
    raw_in_withdrawn: Raw | None = None
    raw_out_received: Raw | None = None
    user_closed: bool | None = None
    # trigger
    status: MaybeLabel = None
    raw_making_amount: Raw | None = None
    raw_remaining_making_amount: Raw | None = None
    expired_at: MaybeWhen = None
    trades: list[Trade] = Field(default_factory=list)


class OrderPage(_Model):
    """One page of a listing, with what could not be read."""

    page: int
    total_pages: int
    orders: list[ListedOrder] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    # the keys (as read) of orders with a part that could not be read: not whole
    incomplete: set[str] = Field(default_factory=set)


def _usd(value: Any) -> Any:
    """``usdPrice``: a JSON number (or numeric text) as an exact `Decimal`; anything
    unusable (missing, negative, not a number) is no price."""
    if value is None or isinstance(value, bool):
        return None
    try:
        price = Decimal(str(value))
    except InvalidOperation:
        return None
    return price if price.is_finite() and price > 0 else None


class TokenFacts(_Model):
    """A Tokens V2 ``/search`` entry (openapi-spec/tokens/v2/tokens.yaml,
    ``MintInformation``): ``id`` is the mint."""

    id: Key
    decimals: Annotated[int, Field(ge=0, le=255)]
    symbol: str | None = None
    name: str | None = None
    token_program: str | None = None
    usd_price: Annotated[Decimal | None, BeforeValidator(_usd)] = None


def _where(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]) + f": {first['msg']}"


def parse_order(item: Any) -> tuple[ListedOrder | None, list[str]]:
    """An order with its readable trades, and a problem per unreadable part.
    ``None`` when the order itself cannot be read."""
    if not isinstance(item, dict):
        return None, ["an order that is not a JSON object"]
    key = item.get("orderKey") if isinstance(item.get("orderKey"), str) else "?"
    problems: list[str] = []
    raw_trades = item.get("trades")
    trades: list[Trade] = []
    if not isinstance(raw_trades, list):
        problems.append(f"order {key}: trades is missing or not a list")
    else:
        for n, raw in enumerate(raw_trades):
            try:
                trades.append(Trade.model_validate(raw))
            except ValidationError as exc:
                problems.append(f"order {key}: trade {n}: {_where(exc)}")
    try:
        order = ListedOrder.model_validate({**item, "trades": []})
    except ValidationError as exc:
        return None, [f"order {key}: {_where(exc)}", *problems]
    return order.model_copy(update={"trades": trades}), problems


def parse_page(data: Any, array: str) -> OrderPage:
    """A listing page whose orders are under `array` (``time`` / ``all`` for
    recurring, ``orders`` for trigger). Raises ValueError when the page as a
    whole is unusable (no page numbers, no order array)."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    items = data.get(array)
    if items is None and array == "time" and isinstance(data.get("all"), list):
        items = data["all"]
    if isinstance(items, dict) and isinstance(items.get("orders"), list):
        # the March-2025 shape nested the page: {"time": {"orders": [...], "page", "totalPages"}}
        data = {**data, **{k: v for k, v in items.items() if k in ("page", "totalPages")}}
        items = items["orders"]
    if not isinstance(items, list):
        raise ValueError(f"no '{array}' list")
    page, total = data.get("page"), data.get("totalPages")
    if isinstance(page, str) and page.isdigit():
        page = int(page)
    if isinstance(total, float) and total.is_integer():
        total = int(total)
    if isinstance(page, float) and page.is_integer():
        page = int(page)
    if not isinstance(page, int) or isinstance(page, bool) or not isinstance(total, int):
        raise ValueError("page or totalPages missing or not a number")
    orders: list[ListedOrder] = []
    problems: list[str] = []
    incomplete: set[str] = set()
    for item in items:
        if isinstance(item, dict) and item.get("recurringType") not in (None, "time"):
            continue  # deprecated price-based orders are not ours to follow
        order, found = parse_order(item)
        problems.extend(found)
        if order is not None:
            orders.append(order)
            if found:
                incomplete.add(order.order_key)
    return OrderPage(
        page=page, total_pages=max(total, 0), orders=orders, problems=problems,
        incomplete=incomplete,
    )  # fmt: skip


def parse_tokens(data: Any) -> list[TokenFacts]:
    if not isinstance(data, list):
        raise ValueError("not a JSON list")
    found = []
    for item in data:
        try:
            found.append(TokenFacts.model_validate(item))
        except ValidationError:
            continue  # an entry without decimals tells us nothing
    return found
