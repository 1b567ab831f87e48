"""Checks of the request bodies a plan gives (API.md), without the wallet field
the daemon fills in (``user`` / ``maker`` / ``taker``). The body sent is the
plan's own mapping plus the wallet, so new API fields pass through unchanged;
these models only refuse what the API would refuse for sure."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator
from pydantic.alias_generators import to_camel

from daemon.api.models import Amount

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


class TimeParams(_Request):
    in_amount: NonNegative  # the total, in base units
    number_of_orders: Annotated[StrictInt, Field(ge=2)]
    interval: Positive  # seconds
    min_price: float | None = None
    max_price: float | None = None
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
    """POST /trigger/v1/cancelOrder, minus ``maker``."""

    wallet_field: ClassVar[str] = "maker"
    order: StrictStr = Field(min_length=32)
    compute_unit_price: StrictStr = "auto"

    @model_validator(mode="after")
    def _price(self) -> TriggerCancelRequest:
        if self.compute_unit_price != "auto" and not self.compute_unit_price.isdigit():
            raise ValueError("computeUnitPrice must be 'auto' or micro-lamports as a string")
        return self


class UltraOrderRequest(_Request):
    """GET /ultra/v1/order query, minus ``taker``."""

    wallet_field: ClassVar[str] = "taker"
    input_mint: StrictStr
    output_mint: StrictStr
    amount: Amount
