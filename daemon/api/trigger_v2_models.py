"""Typed answers of Jupiter's Trigger V2 API (docs/products.md): lenient on
unknown fields (the API is in beta), strict on the ones we use. Amounts stay
exact: integer strings as given.

History pages are read item by item: an order that cannot be read is a
problem of the page, the rest is kept (as `jupcron.api.orders` does for v1).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StrictStr, ValidationError

from jupcron.api.models import Amount, ApiModel
from jupcron.api.orders import ADDRESS_CHARS, LABEL_CHARS, OptionalTx, Raw
from jupcron.api.times import from_iso, from_unix

Text = Annotated[StrictStr, Field(min_length=1)]
# what the follower stores of a history order, bounded as v1's listings are
# (`jupcron.api.orders`): an id, mint, signature or state longer than its column, or
# an amount beyond u64, is garbage and a problem of its order; stored, PostgreSQL's
# VARCHAR(n) refused it and ended the family's poll at that order, at every poll
Key = Annotated[StrictStr, Field(min_length=1, max_length=ADDRESS_CHARS)]
MaybeKey = Annotated[StrictStr | None, Field(max_length=ADDRESS_CHARS)]
MaybeLabel = Annotated[StrictStr | None, Field(max_length=LABEL_CHARS)]


def _moment(value: Any) -> Any:
    """A time as the V2 API sends it: ISO 8601 (DCA) or unix milliseconds (price)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return from_unix(value, per_second=1000)
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return from_unix(int(text), per_second=1000)
        return from_iso(text)
    raise ValueError("a time must be ISO 8601 text or unix milliseconds")


Moment = Annotated[datetime | None, BeforeValidator(_moment)]


class Challenge(ApiModel):
    """``POST /auth/challenge``: a ``message`` challenge (or a ``transaction`` one,
    which jupcron never signs)."""

    type: StrictStr
    challenge: StrictStr | None = None
    transaction: StrictStr | None = None


class Verified(ApiModel):
    """``POST /auth/verify``."""

    token: Text


class Vault(ApiModel):
    """``GET /vault`` and ``GET /vault/register``."""

    user_pubkey: Text
    vault_pubkey: Text
    privy_vault_id: StrictStr | None = None


class Deposit(ApiModel):
    """``POST /deposit/craft``: the unsigned deposit and its single-use requestId."""

    transaction: Text
    request_id: Text
    receiver_address: Text
    mint: Text
    amount: Amount
    token_decimals: int | None = None
    input_token_account: StrictStr | None = None
    output_token_account: StrictStr | None = None


class Created(ApiModel):
    """Create (DCA or price) and confirm-cancel: the order id and the signature
    of the deposit (create) or the withdrawal (confirm-cancel). An id longer than the
    run's order column is an unreadable answer (settled as one), not a run whose
    final write PostgreSQL refuses."""

    id: Key
    tx_signature: Text
    deposit_confirmed: bool | None = None
    message: StrictStr | None = None


class CancelCraft(ApiModel):
    """``POST /orders/{price|dca}/cancel/{id}``: the unsigned withdrawal."""

    id: Text
    transaction: Text
    request_id: Text
    refund_amount: Amount | None = None
    rounds_remaining: int | None = None


class OrderEvent(ApiModel):
    """One entry of a history item's ``events``. DCA events carry ``inputAmount``;
    price events ``mint``/``amount`` (and ``outputMint``/``outputAmount`` on fills)."""

    type: StrictStr
    timestamp: Moment = None
    tx_signature: OptionalTx = None
    state: StrictStr | None = None
    round_number: int | None = None
    input_amount: Raw | None = None
    output_amount: Raw | None = None
    mint: MaybeKey = None
    amount: Raw | None = None
    output_mint: MaybeKey = None


class HistoryOrder(ApiModel):
    """A DCA (``DcaHistoryItem``) or price (``OrderHistoryItem``) order of the history.

    DCA: ``state``/``displayState``, ``vaultPubkey``, ``inputAmountInitial``,
    ``inputAmountUsed``, ``outputAmountTotal``. Price: ``orderState``/``rawState``,
    ``privyWalletPubkey``, ``initialInputAmount``, ``remainingInputAmount``,
    ``inputUsed``, ``outputAmount``."""

    id: Key
    user_pubkey: StrictStr | None = None
    input_mint: Key
    output_mint: Key
    request_id: StrictStr | None = None
    created_at: Moment = None
    updated_at: Moment = None
    events: list[OrderEvent] = Field(default_factory=list)
    # DCA
    state: MaybeLabel = None
    display_state: StrictStr | None = None
    vault_pubkey: StrictStr | None = None
    input_amount_initial: Raw | None = None
    input_amount_used: Raw | None = None
    output_amount_total: Raw | None = None
    # price
    order_state: MaybeLabel = None
    raw_state: MaybeLabel = None
    privy_wallet_pubkey: StrictStr | None = None
    initial_input_amount: Raw | None = None
    remaining_input_amount: Raw | None = None
    input_used: Raw | None = None
    output_amount: Raw | None = None

    def event_with(self, kind: str, signature: str) -> OrderEvent | None:
        """The event of type `kind` carrying `signature` that did not fail or wait (its
        ``state`` success, or unsaid), if any: a failed deposit proves nothing landed."""
        for event in self.events:
            landed = event.state in (None, "success")
            if event.type == kind and event.tx_signature == signature and landed:
                return event
        return None


class HistoryPage(ApiModel):
    """One page of ``GET /orders/history[/dca]``, with what could not be read."""

    orders: list[HistoryOrder] = Field(default_factory=list)
    total: int = 0
    limit: int = 0
    offset: int = 0
    problems: list[str] = Field(default_factory=list)


def parse_history(data: Any) -> HistoryPage:
    """A history page; ValueError when the page as a whole is unusable."""
    if not isinstance(data, dict) or not isinstance(data.get("orders"), list):
        raise ValueError("no 'orders' list")
    pagination = data.get("pagination")
    if not isinstance(pagination, dict):
        raise ValueError("no 'pagination' object")
    numbers = [pagination.get(k) for k in ("total", "limit", "offset")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        raise ValueError("pagination total, limit or offset missing or not a whole number")
    orders: list[HistoryOrder] = []
    problems: list[str] = []
    for item in data["orders"]:
        key = item.get("id", "?") if isinstance(item, dict) else "?"
        try:
            orders.append(HistoryOrder.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"order {key}: {where}: {first['msg']}")
    total, limit, offset = (int(n) for n in numbers)  # type: ignore[arg-type]
    return HistoryPage(orders=orders, total=total, limit=limit, offset=offset, problems=problems)


def jwt_expiry(token: str) -> float | None:
    """The ``exp`` claim (unix seconds) of a JWT, read without checking its
    signature (only the API can); None when it has none or cannot be read."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    exp = payload.get("exp") if isinstance(payload, dict) else None
    if isinstance(exp, int | float) and not isinstance(exp, bool) and exp > 0:
        return float(exp)
    return None


Family = Literal["dca", "price"]
