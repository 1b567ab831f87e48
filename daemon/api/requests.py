"""Checks of the request bodies a plan gives (API.md), without the wallet field
the daemon fills in (``user`` / ``maker`` / ``taker``). The body sent is the
plan's own mapping plus the wallet, so new API fields pass through unchanged;
these models only refuse what the API would refuse for sure."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictInt,
    StrictStr,
    model_validator,
)
from pydantic.alias_generators import to_camel

from jupcron.api.models import Amount

NonNegative = Annotated[StrictInt, Field(ge=0)]
Positive = Annotated[StrictInt, Field(gt=0)]


class _Request(BaseModel):
    model_config = ConfigDict(
        extra="allow", frozen=True, populate_by_name=True, alias_generator=to_camel
    )

    @model_validator(mode="before")
    @classmethod
    def _no_wallet(cls, data: Any) -> Any:
        wallet = getattr(cls, "wallet_field", None)
        if isinstance(data, dict) and wallet and wallet in data:
            raise ValueError(f"'{wallet}' is filled in by the daemon; leave it out")
        return data


def _price(value: object) -> Decimal | None:
    """A price bound as the plan wrote it (a number, or its exact text as stored)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValueError("must be a number")
    try:
        price = Decimal(str(value))
    except InvalidOperation:
        raise ValueError("must be a number") from None
    if not price.is_finite() or price <= 0:
        raise ValueError("must be a positive number")
    return price


PriceBound = Annotated[Decimal | None, PlainValidator(_price)]


class TimeParams(_Request):
    in_amount: NonNegative  # the total, in base units
    number_of_orders: Annotated[StrictInt, Field(ge=2)]
    interval: Positive  # seconds
    # JSON numbers on the wire (API.md), sent from their exact decimal text
    min_price: PriceBound = None
    max_price: PriceBound = None
    start_at: NonNegative | None = None


class PriceParams(_Request):
    """Deprecated by Jupiter; accepted with a warning."""

    deposit_amount: NonNegative
    increment_usdc_value: NonNegative
    interval: Positive
    start_at: NonNegative | None = None


class RecurringParams(_Request):
    time: TimeParams | None = None
    price: PriceParams | None = None

    @model_validator(mode="after")
    def _one(self) -> RecurringParams:
        if (self.time is None) == (self.price is None):
            raise ValueError("give exactly one of params.time or params.price")
        return self


class RecurringCreateRequest(_Request):
    """POST /recurring/v1/createOrder, minus ``user``."""

    wallet_field: ClassVar[str] = "user"
    input_mint: StrictStr
    output_mint: StrictStr
    params: RecurringParams


class TriggerCancelRequest(_Request):
    """POST /trigger/v1/cancelOrder, minus ``maker``. ``computeUnitPrice`` is ``auto``
    or micro-lamports, as an integer or a digit string; `wire_compute_unit_price` is
    the string sent."""

    wallet_field: ClassVar[str] = "maker"
    order: StrictStr = Field(min_length=32)
    compute_unit_price: StrictStr | Positive = "auto"

    @model_validator(mode="after")
    def _price(self) -> TriggerCancelRequest:
        price = self.compute_unit_price
        if isinstance(price, str) and price != "auto" and not (price.isascii() and price.isdigit()):
            raise ValueError("computeUnitPrice must be 'auto' or micro-lamports")
        return self

    @property
    def wire_compute_unit_price(self) -> str:
        """The API's form: ``auto`` or the micro-lamports as a string of digits."""
        price = self.compute_unit_price
        return price if price == "auto" else str(int(price))


class _OrderQuery(_Request):
    """A swap API's ``GET /order`` query, minus ``taker``: only the parameters that
    API's spec lists (anything else is refused here, so it is never sent)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, alias_generator=to_camel
    )
    wallet_field: ClassVar[str] = "taker"
    params: ClassVar[frozenset[str]] = frozenset()
    input_mint: StrictStr
    output_mint: StrictStr
    amount: Amount
    receiver: StrictStr | None = None
    payer: StrictStr | None = None
    referral_account: StrictStr | None = None
    referral_fee: Annotated[StrictInt, Field(ge=50, le=255)] | None = None
    exclude_routers: StrictStr | None = None
    exclude_dexes: StrictStr | None = None


class UltraOrderRequest(_OrderQuery):
    """GET /ultra/v1/order (openapi-spec/ultra/ultra.yaml): Swap V2's slippage, fee
    and ``swapMode`` parameters are not Ultra's; ``closeAuthority`` is Ultra's only."""

    close_authority: StrictStr | None = None


class SwapV2OrderRequest(_OrderQuery):
    """GET /swap/v2/order (openapi-spec/swap/v2/swap.yaml)."""

    swap_mode: Literal["ExactIn"] | None = None
    slippage_bps: Annotated[StrictInt, Field(ge=0, le=10_000)] | None = None
    priority_fee_lamports: Positive | None = None
    jito_tip_lamports: Positive | None = None
    broadcast_fee_type: Literal["maxCap", "exactFee"] | None = None


def _wire_names(model: type[_OrderQuery]) -> frozenset[str]:
    return frozenset(f.alias or name for name, f in model.model_fields.items())


UltraOrderRequest.params = _wire_names(UltraOrderRequest)
SwapV2OrderRequest.params = _wire_names(SwapV2OrderRequest)
