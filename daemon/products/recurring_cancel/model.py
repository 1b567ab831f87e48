"""Recurring's cancel: the ``POST /recurring/v1/cancelOrder`` body, minus ``user``
(openapi-spec/recurring/recurring.yaml, ``CloseRecurring``) — one model, for plans
and the API client alike. One order a transaction (recurring/cancel-order.mdx):
the plan names the order account; ``recurringType`` is ``time`` (``price`` is
deprecated by Jupiter, and its program's interface is not public)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from daemon.plans.fields import Pubkey, _Model
from daemon.products.spec import RequestSpec

WALLET_FIELD = "user"


class RecurringCancelRequest(_Model):
    """POST /recurring/v1/cancelOrder body, minus ``user``."""

    order: Pubkey
    recurring_type: Literal["time"] = Field(default="time", alias="recurringType")


SPEC = RequestSpec(model=RecurringCancelRequest, wallet_field=WALLET_FIELD)
