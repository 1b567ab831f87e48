"""Trigger V2 plan requests: time-based DCA, price orders, and their cancel.

Each mirrors the documented body (docs/products.md) minus what the daemon
fills in: ``userPubkey`` (the wallet) and the deposit (``depositRequestId``,
``depositSignedTx``). ``expiresAfter`` is jupcron's: a price order's
``expiresAt`` counted from the fire time, for plans that fire again and again.

The documented limits that span fields are `jupcron.products.trigger_v2.checks`.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, PlainValidator, StrictBool, StrictInt

from jupcron.plans.fields import (
    Amount,
    Duration,
    Mint,
    Price,
    _at_least,
    _clip,
    _Model,
)
from jupcron.scheduling.schedule import parse_instant

DCA_MIN_ROUNDS = 2
DCA_INTERVAL_MIN, DCA_INTERVAL_MAX = 60, 31_536_000  # 1 minute .. 1 year
MIN_USD = Decimal(10)  # a DCA round, a price order (the deposit)
MIN_USD_TOLERANCE = Decimal("0.20")  # the docs: "$0.20 tolerance" on a round
MAX_ACTIVE_DCA = 10  # active DCA orders per wallet
BEGIN_FILL_MAX = timedelta(days=30)
TRAILING_MIN, TRAILING_MAX = 50, 9000
_ORDER_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
WALLET_FIELD = "userPubkey"
DEPOSIT_FIELDS = ("depositRequestId", "depositSignedTx")


def _rounds(value: int) -> int:
    if value < DCA_MIN_ROUNDS:
        raise ValueError(
            f"must be at least {DCA_MIN_ROUNDS} (a Trigger V2 DCA has 2 rounds or more)"
        )
    return value


def _instant(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 time with an offset, e.g. 2026-12-01T09:00:00Z")
    parse_instant(value)
    return value


def _order_id(value: object) -> str:
    if not isinstance(value, str) or not _ORDER_ID.fullmatch(value):
        raise ValueError(
            f"'{_clip(value)}' is not a Trigger V2 order id (the `id` the create call "
            "returned: letters, digits, '-' and '_', as in 019f02b5-0400-72cc-8943-007c4310a3de)"
        )
    return value


def _expires_at(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("must be a time in milliseconds since 1970 (an integer)")
    if value < 10**11:
        raise ValueError(f"{value} looks like seconds; expiresAt is in milliseconds")
    return value


Instant = Annotated[str, PlainValidator(_instant)]
OrderId = Annotated[str, PlainValidator(_order_id)]
Bps = Annotated[StrictInt, _at_least(0, 10_000, " bps")]


class TriggerV2DcaRequest(_Model):
    """POST /trigger/v2/orders/dca, minus ``userPubkey`` and the deposit fields."""

    input_mint: Mint = Field(alias="inputMint")
    output_mint: Mint = Field(alias="outputMint")
    input_amount: Amount = Field(alias="inputAmount")  # the total, split over the rounds
    order_count: Annotated[StrictInt, AfterValidator(_rounds)] = Field(alias="orderCount")
    interval_seconds: Annotated[
        StrictInt, _at_least(DCA_INTERVAL_MIN, DCA_INTERVAL_MAX, " seconds (1 minute to 1 year)")
    ] = Field(alias="intervalSeconds")
    order_type: Literal["time_based", "price_conditional"] = Field(
        default="time_based", alias="orderType"
    )
    min_price_usd: Price | None = Field(default=None, alias="minPriceUsd")
    max_price_usd: Price | None = Field(default=None, alias="maxPriceUsd")
    trigger_mint: Mint | None = Field(default=None, alias="triggerMint")
    begin_fill_at: Instant | None = Field(default=None, alias="beginFillAt")
    jl_enabled: StrictBool | None = Field(default=None, alias="jlEnabled")
    jl_mint: Mint | None = Field(default=None, alias="jlMint")


class TriggerV2OrderRequest(_Model):
    """POST /trigger/v2/orders/price (a ``single`` order, static or trailing), minus
    ``userPubkey`` and the deposit fields; ``expiresAfter`` (jupcron's) or ``expiresAt``."""

    order_type: Literal["single", "oco", "otoco"] = Field(default="single", alias="orderType")
    input_mint: Mint = Field(alias="inputMint")
    output_mint: Mint = Field(alias="outputMint")
    input_amount: Amount = Field(alias="inputAmount")
    trigger_mint: Mint = Field(alias="triggerMint")
    trigger_condition: Literal["above", "below"] = Field(alias="triggerCondition")
    trigger_price_usd: Price | None = Field(default=None, alias="triggerPriceUsd")
    trailing_bps: Annotated[StrictInt, _at_least(TRAILING_MIN, TRAILING_MAX, " bps")] | None = (
        Field(default=None, alias="trailingBps")
    )
    slippage_bps: Bps | None = Field(default=None, alias="slippageBps")
    expires_at: Annotated[int, PlainValidator(_expires_at)] | None = Field(
        default=None, alias="expiresAt"
    )
    expires_after: Duration | None = Field(default=None, alias="expiresAfter")


class TriggerV2CancelRequest(_Model):
    """POST /trigger/v2/orders/{family}/cancel/{order}, then its confirm-cancel."""

    order: OrderId
    family: Literal["dca", "price"]


TriggerV2Request = TriggerV2DcaRequest | TriggerV2OrderRequest | TriggerV2CancelRequest
