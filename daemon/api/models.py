"""Typed answers of the Jupiter API (API.md): lenient on unknown fields,
strict on the ones we use. Amounts stay exact: integer strings as given.

`ExecuteResult` is one normalized shape for the four execute calls; the swap
APIs' codes are mapped to "retry with a fresh order" or final, as API.md lists them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr, model_validator
from pydantic.alias_generators import to_camel

# Ultra execute codes after which a fresh order may be tried (API.md; not -2003, after
# which the maker may still send the fill: MAY_HAVE_LANDED)
RETRY_WITH_FRESH_ORDER = frozenset({-1, -1000, -1001, -1004, -2000, -2001, -2004})
# Ultra / Swap V2 execute codes and what they mean (ultra/response.mdx, swap/order-and-
# execute.mdx, openapi-spec/swap/v2/swap.yaml); a positive code is the program's error
EXECUTE_CODES: dict[int, str] = {
    0: "success",
    -1: "missing cached order: the requestId was not found, likely expired",
    -2: "invalid signed transaction",
    -3: "invalid message bytes: the transaction was modified",
    -4: "missing request id",
    -5: "missing signed transaction",
    -1000: "failed to land",
    -1001: "unknown error",
    -1002: "invalid transaction",
    -1003: "transaction not fully signed",
    -1004: "invalid block height",
    -1005: "expired: attempted, and expired",
    -1006: "timed out: attempted, and timed out (it may still land)",
    -1007: "gasless is not supported for this wallet",
    -2000: "RFQ: failed to land",
    -2001: "RFQ: unknown error",
    -2002: "RFQ: invalid payload",
    -2003: "RFQ: quote expired (the market maker may still send it)",
    -2004: "RFQ: swap rejected",
    -2005: "RFQ: internal error (it may still land)",
}
# codes after which the transaction was sent and its fate is not known: settled like a
# lost answer (the same signed bytes, the chain, in_doubt), never straight to failed.
# -2003 is one: "RFQ provider did not execute in time" (ultra/response.mdx), and the
# JupiterZ market maker signs and sends the fill itself (jup-ag/rfq-webhook-toolkit
# README), which its program takes until the fill's expire_at: it may land after the answer
MAY_HAVE_LANDED = frozenset({-1006, -2003, -2005})
# the execute operations of the swap APIs (Ultra v1, Swap V2): the same answer shape
SWAP_EXECUTES = frozenset({"execute_ultra", "execute_swap"})
# Ultra /order errorCode meanings (record the run as skipped, do not sign)
ORDER_ERROR_CODES = {1: "insufficient funds", 2: "needs SOL for gas", 3: "below gasless minimum"}
# Swap V2 /order errorCode meanings when the JupiterZ (RFQ) router won the quote
RFQ_ORDER_ERROR_CODES = {
    1: "insufficient balance to fund the swap",
    2: "missing associated token account",
    3: "quote could not be built into a transaction",
}


def _amount(value: Any) -> Any:
    """An exact amount: an integer, or a string of digits, kept as a string. ASCII
    digits only: ``str.isdigit`` also says yes to "²" (which ``int`` refuses) and "１２"
    (which it reads, but SQL's CAST cannot)."""
    if isinstance(value, bool):
        raise ValueError("an amount must be an integer or a string of digits")
    if isinstance(value, int) and value >= 0:
        return str(value)
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return value
    raise ValueError("an amount must be an integer or a string of digits")


def _code(value: Any) -> Any:
    """API codes are numbers, sometimes sent as strings; bools and floats are not codes."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str):
        text = value.strip()
        return int(text) if text.lstrip("-").isdigit() else text
    raise ValueError("a code must be a number or a string")


def _slot(value: Any) -> Any:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError("a slot must be an integer")


def _height(value: Any) -> Any:
    """A block height: Swap V2's /order sends it as a string of digits (its spec),
    /build as a number; either is read, a negative, fractional or empty one is not."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    raise ValueError("a block height must be a whole number")


def _unix_seconds(value: Any) -> Any:
    """An RFQ quote's ``expireAt``: unix seconds, a string of digits in the docs'
    example (``"1758598698"``; a number, milliseconds or an ISO time are read too).
    Anything else is not known (None), never a reason to refuse the whole order."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            value = int(text)
        else:
            try:
                when = datetime.fromisoformat(text)
            except ValueError:
                return None
            return int(when.timestamp()) if when.tzinfo is not None else None
    if isinstance(value, int) and value > 0:
        return value // 1000 if value >= 10**12 else value  # milliseconds
    return None


Amount = Annotated[str, BeforeValidator(_amount)]
Code = Annotated[int | str | None, BeforeValidator(_code)]
Slot = Annotated[int | None, BeforeValidator(_slot)]
BlockHeight = Annotated[int | None, BeforeValidator(_height)]
UnixSeconds = Annotated[int | None, BeforeValidator(_unix_seconds)]


class ApiModel(BaseModel):
    model_config = ConfigDict(
        extra="ignore", frozen=True, populate_by_name=True, alias_generator=to_camel
    )


def _error_text(data: Any) -> Any:
    """Read ``error ?? message`` (the docs used both)."""
    if not isinstance(data, dict) or data.get("error") is not None:
        return data
    if isinstance(data.get("message"), str):
        return {**data, "error": data["message"]}
    return data


class ErrorEnvelope(ApiModel):
    """The error body of any product: ``{error|message, code, cause?, status?, signature?}``."""

    error: str | None = None
    code: Code = None
    cause: str | None = None
    status: str | None = None
    signature: str | None = None

    _text = model_validator(mode="before")(_error_text)


class OrderResponse(ApiModel):
    """Recurring createOrder / Trigger cancelOrder: an unsigned transaction to sign."""

    request_id: StrictStr = Field(min_length=1)
    transaction: StrictStr = Field(min_length=1)
    order: StrictStr | None = None


class BatchResponse(ApiModel):
    """Trigger cancelOrders: the unsigned transactions (5 cancels each) of one request."""

    request_id: StrictStr = Field(min_length=1)
    transactions: list[StrictStr] = Field(min_length=1)


class UltraOrder(ApiModel):
    """Ultra (or Swap V2) /order. ``transaction`` is ``""`` (its spec; None is read
    the same) with an ``error_code`` when Jupiter will not build it: the run is
    skipped, nothing is signed."""

    request_id: StrictStr = Field(min_length=1)
    transaction: StrictStr | None = None
    in_amount: Amount
    out_amount: Amount
    gasless: bool = False
    router: str | None = None
    error_code: Code = None
    error_message: str | None = None
    input_mint: str | None = None
    output_mint: str | None = None
    other_amount_threshold: Amount | None = None
    slippage_bps: int | None = None
    mode: str | None = None
    swap_type: str | None = None
    taker: str | None = None
    fee_bps: int | None = None
    signature_fee_lamports: int | None = None
    prioritization_fee_lamports: int | None = None
    rent_fee_lamports: int | None = None
    expire_at: UnixSeconds = None  # an RFQ (JupiterZ) quote's expiry

    @property
    def skipped(self) -> bool:
        return not self.transaction and self.error_code is not None

    @property
    def skip_reason(self) -> str | None:
        if not self.skipped:
            return None
        known = ORDER_ERROR_CODES.get(self.error_code) if isinstance(self.error_code, int) else None
        return known or self.error_message or f"errorCode {self.error_code}"


class SwapOrder(UltraOrder):
    """Swap V2 /order: Ultra's shape plus ``lastValidBlockHeight``, the hard expiry
    of an aggregator route's transaction (absent on RFQ routes, which send
    ``expireAt``). ``transaction`` is ``""`` with an ``errorCode`` when the route
    was quoted but cannot be built: the run is skipped, nothing is signed.

    Its spec (openapi-spec/swap/v2/swap.yaml) makes every field optional and lets
    a 200 carry ``error`` ("a duplicate of errorMessage"): an answer with no
    transaction but an ``error`` is skipped with that reason, like an ``errorCode``;
    amounts may be absent (the runner falls back to the plan's)."""

    request_id: StrictStr | None = None  # type: ignore[assignment]
    in_amount: Amount | None = None  # type: ignore[assignment]
    out_amount: Amount | None = None  # type: ignore[assignment]
    error: str | None = None
    last_valid_block_height: BlockHeight = None

    @property
    def skipped(self) -> bool:
        return not self.transaction and (
            self.error_code is not None or bool(self.error_message or self.error)
        )

    @property
    def skip_reason(self) -> str | None:
        """The code's meaning depends on the router (the docs: match on both)."""
        if not self.skipped:
            return None
        table = RFQ_ORDER_ERROR_CODES if self.router == "jupiterz" else ORDER_ERROR_CODES
        known = table.get(self.error_code) if isinstance(self.error_code, int) else None
        text = self.error_message or self.error
        return known or text or f"errorCode {self.error_code}"


def _amm_key(data: Any) -> Any:
    """The documented answer has no AMM key; the v6 program's on-chain swap event
    names it ``amm``. Take ``amm`` or ``ammKey`` when sent."""
    if isinstance(data, dict) and data.get("amm") is None and data.get("ammKey") is not None:
        return {**data, "amm": data["ammKey"]}
    return data


class SwapEvent(ApiModel):
    input_mint: StrictStr
    input_amount: Amount
    output_mint: StrictStr
    output_amount: Amount
    amm: StrictStr | None = None

    _amm = model_validator(mode="before")(_amm_key)


# a swap event's facts, by their answer's names and ours (`populate_by_name`)
_SWAP_EVENT_FACTS = (
    ("inputMint", "input_mint"),
    ("inputAmount", "input_amount"),
    ("outputMint", "output_mint"),
    ("outputAmount", "output_amount"),
)


def _whole_events(value: Any) -> Any:
    """``swapEvents`` as far as it can be read: null is none, and an event without one
    of its four facts (Swap V2's spec makes each optional) is left out of them, never
    read with a made-up mint or a 0 amount; the stored answer (`raw`) keeps it as sent.
    A fact of the wrong type still refuses the answer, as on every field we use."""
    if value is None:
        return []
    if not isinstance(value, list):
        return value
    return [
        event
        for event in value
        if not isinstance(event, dict)
        or all(
            event.get(camel) is not None or event.get(snake) is not None
            for camel, snake in _SWAP_EVENT_FACTS
        )
    ]


SwapEvents = Annotated[list[SwapEvent], BeforeValidator(_whole_events)]


class ExecuteResult(ApiModel):
    """One shape for the recurring, trigger and Ultra execute answers."""

    operation: str = ""
    http_status: int | None = None
    status: Literal["Success", "Failed"] | None = None
    code: Code = None
    signature: StrictStr | None = None
    slot: Slot = None
    error: str | None = None
    cause: str | None = None
    order: StrictStr | None = None
    input_amount: Amount | None = Field(default=None, alias="totalInputAmount")
    output_amount: Amount | None = Field(default=None, alias="totalOutputAmount")
    input_amount_result: Amount | None = None
    output_amount_result: Amount | None = None
    swap_events: SwapEvents = Field(default_factory=list)
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)

    _text = model_validator(mode="before")(_error_text)

    @property
    def succeeded(self) -> bool:
        return self.status == "Success" and self.code in (None, 0)

    @property
    def retry_with_fresh_order(self) -> bool:
        """Ultra and Swap V2 only: the order may be tried again with a new /order call."""
        return (
            self.operation in SWAP_EXECUTES
            and not self.succeeded
            and isinstance(self.code, int)
            and self.code in RETRY_WITH_FRESH_ORDER
        )

    @property
    def may_have_landed(self) -> bool:
        """Ultra and Swap V2: the API sent the transaction and cannot say whether it
        landed (-1006 timed out, -2003 RFQ quote expired, -2005 RFQ internal error)."""
        return (
            self.operation in SWAP_EXECUTES
            and isinstance(self.code, int)
            and self.code in MAY_HAVE_LANDED
        )

    @property
    def meaning(self) -> str | None:
        """What the documented code means (swap APIs), for the run's error text."""
        if self.operation not in SWAP_EXECUTES or not isinstance(self.code, int):
            return None
        if self.code > 0:
            return f"program error {self.code}"
        return EXECUTE_CODES.get(self.code, f"undocumented code {self.code}")
