"""Recurring's cancel: the ``POST /recurring/v1/cancelOrder`` body, minus ``user``
(openapi-spec/recurring/recurring.yaml, ``CloseRecurring``) — one model, for plans
and the API client alike. One order a transaction (recurring/cancel-order.mdx):
the plan names the order account, or a pair (``inputMint``, ``outputMint``: each
run closes the oldest open order of ours on that pair, so a plan that fires until
none is left closes them all); ``recurringType`` is ``time`` (``price`` is
deprecated by Jupiter, and its program's interface is not public). Only ``order``
and ``recurringType`` are the API's: a pair is resolved to an order first."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from jupcron.plans.fields import Mint, Pubkey, _Model
from jupcron.products.findings import Finding
from jupcron.products.spec import CheckContext, RequestSpec

WALLET_FIELD = "user"


class RecurringCancelRequest(_Model):
    """POST /recurring/v1/cancelOrder body, minus ``user``."""

    order: Pubkey | None = None
    input_mint: Mint | None = Field(default=None, alias="inputMint")
    output_mint: Mint | None = Field(default=None, alias="outputMint")
    recurring_type: Literal["time"] = Field(default="time", alias="recurringType")

    @model_validator(mode="after")
    def _one_target(self) -> RecurringCancelRequest:
        pair = (self.input_mint, self.output_mint)
        if (self.order is None) == (None in pair) or (None in pair and pair != (None, None)):
            raise ValueError("give either order, or both inputMint and outputMint")
        return self

    def wire(self, order: str) -> dict[str, str]:
        """The API's body for closing `order` (without ``user``)."""
        return {"order": order, "recurringType": self.recurring_type}


def checks(request: RecurringCancelRequest, context: CheckContext) -> list[Finding]:
    if request.input_mint is not None and request.input_mint == request.output_mint:
        return [Finding(("request", "outputMint"), "outputMint is the same as inputMint")]
    return []


SPEC = RequestSpec(model=RecurringCancelRequest, wallet_field=WALLET_FIELD, checks=checks)
