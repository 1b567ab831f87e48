"""Trigger v1's cancel: the ``POST /trigger/v1/cancelOrder`` body, minus ``maker``
— the one model of it, for plans and the API client alike."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, PlainValidator

from jupcron.plans.fields import U64_MAX, Pubkey, _Model
from jupcron.products.spec import RequestSpec

WALLET_FIELD = "maker"


def _compute_unit_price(value: object) -> int | str:
    """``auto``, or micro-lamports as an integer or a string of digits (the API takes a
    string; the client sends every form as one). Kept as written, so the stored plan
    and its content hash do not depend on the form."""
    if value == "auto":
        return "auto"
    number = value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(value, str) and value.isascii() and value.isdigit():
        number = int(value)
    if number is None or not 0 < number <= U64_MAX:
        raise ValueError("must be 'auto' or a positive integer (micro-lamports)")
    return value if isinstance(value, str) else number


class TriggerCancelRequest(_Model):
    """POST /trigger/v1/cancelOrder body, minus ``maker``."""

    order: Pubkey
    compute_unit_price: Annotated[int | str, PlainValidator(_compute_unit_price)] | None = Field(
        default=None, alias="computeUnitPrice"
    )

    @property
    def wire_compute_unit_price(self) -> str:
        """The API's form: ``auto`` (also when unset) or the micro-lamports as digits."""
        price = self.compute_unit_price
        return "auto" if price is None or price == "auto" else str(int(price))


SPEC = RequestSpec(model=TriggerCancelRequest, wallet_field=WALLET_FIELD)
