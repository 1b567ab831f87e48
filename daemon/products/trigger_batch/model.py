"""Trigger v1's batch cancel: the ``POST /trigger/v1/cancelOrders`` body, minus
``maker`` (trigger/v1/cancel-order.mdx, "Cancel Orders") — one model, for plans
and the API client alike. The API batches cancels 5 to a transaction; a plan
names 1 to 5 order accounts, so a run signs one transaction (leaving ``orders``
out, "cancel ALL", is refused: which orders would close is then the API's say)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, PlainValidator, field_validator

from jupcron.plans.fields import Pubkey, _Model
from jupcron.products.spec import RequestSpec
from jupcron.products.trigger.model import _compute_unit_price

WALLET_FIELD = "maker"
BATCH = 5  # orders a transaction, as the API groups them


class TriggerCancelBatchRequest(_Model):
    """POST /trigger/v1/cancelOrders body, minus ``maker``."""

    orders: Annotated[tuple[Pubkey, ...], Field(min_length=1, max_length=BATCH)]
    compute_unit_price: Annotated[int | str, PlainValidator(_compute_unit_price)] | None = Field(
        default=None, alias="computeUnitPrice"
    )

    @field_validator("orders")
    @classmethod
    def _distinct(cls, orders: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(orders)) != len(orders):
            raise ValueError("an order account is named twice")
        return orders

    @property
    def wire_compute_unit_price(self) -> str:
        """The API's form: ``auto`` (also when unset) or the micro-lamports as digits."""
        price = self.compute_unit_price
        return "auto" if price is None or price == "auto" else str(int(price))


SPEC = RequestSpec(model=TriggerCancelBatchRequest, wallet_field=WALLET_FIELD)
