"""Trigger V2 plan requests: time-based DCA, price orders, and their cancel.

Each mirrors the documented body (docs/products.md) minus what the daemon
fills in: ``userPubkey`` (the wallet) and the deposit (``depositRequestId``,
``depositSignedTx``). ``expiresAfter`` is jupcron's: a price order's
``expiresAt`` counted from the fire time, for plans that fire again and again.

`checks` holds the documented limits that span fields (minimum USD a round,
price bands, trailing direction, dates); each finding names the exact key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, PlainValidator, StrictBool, StrictInt

from jupcron.plans.fields import (
    STABLECOINS,
    Amount,
    Duration,
    Price,
    Pubkey,
    _at_least,
    _Model,
    _short,
)
from jupcron.schedule import Schedule, next_fire_times, parse_duration, parse_instant

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
            f"'{_short(value)}' is not a Trigger V2 order id (the `id` the create call "
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

    input_mint: Pubkey = Field(alias="inputMint")
    output_mint: Pubkey = Field(alias="outputMint")
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
    trigger_mint: Pubkey | None = Field(default=None, alias="triggerMint")
    begin_fill_at: Instant | None = Field(default=None, alias="beginFillAt")
    jl_enabled: StrictBool | None = Field(default=None, alias="jlEnabled")
    jl_mint: Pubkey | None = Field(default=None, alias="jlMint")


class TriggerV2OrderRequest(_Model):
    """POST /trigger/v2/orders/price (a ``single`` order, static or trailing), minus
    ``userPubkey`` and the deposit fields; ``expiresAfter`` (jupcron's) or ``expiresAt``."""

    order_type: Literal["single", "oco", "otoco"] = Field(default="single", alias="orderType")
    input_mint: Pubkey = Field(alias="inputMint")
    output_mint: Pubkey = Field(alias="outputMint")
    input_amount: Amount = Field(alias="inputAmount")
    trigger_mint: Pubkey = Field(alias="triggerMint")
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


@dataclass(frozen=True)
class V2Finding:
    """A rule broken across fields (location relative to the plan)."""

    loc: tuple[str | int, ...]
    message: str
    warning: bool = False


def _usd(amount: int | Decimal, decimals: int) -> Decimal:
    return (Decimal(amount) / (Decimal(10) ** decimals)).quantize(Decimal("0.01"))


def checks(request: TriggerV2Request, now: datetime | None = None) -> list[V2Finding]:
    """The documented limits across fields; `now` (UTC) for the dates."""
    now = now or datetime.now(UTC)
    if isinstance(request, TriggerV2DcaRequest):
        return _dca(request, now)
    if isinstance(request, TriggerV2OrderRequest):
        return _order(request, now)
    return []


def _dca(r: TriggerV2DcaRequest, now: datetime) -> list[V2Finding]:
    out: list[V2Finding] = []
    req = ("request",)
    if r.input_mint == r.output_mint:
        out.append(V2Finding((*req, "outputMint"), "outputMint is the same as inputMint"))
    stable = STABLECOINS.get(r.input_mint)
    if stable is not None:
        symbol, decimals = stable
        per_round = _usd(Decimal(r.input_amount) / r.order_count, decimals)
        if per_round < MIN_USD - MIN_USD_TOLERANCE:
            out.append(
                V2Finding(
                    (*req, "inputAmount"),
                    f"each round would be {per_round} {symbol} (inputAmount / orderCount); "
                    f"Trigger V2 DCA needs at least {MIN_USD} USD a round",
                )
            )
    bounds = r.min_price_usd is not None or r.max_price_usd is not None
    if r.order_type == "price_conditional":
        if r.trigger_mint is None:
            out.append(V2Finding((*req, "orderType"), "a price_conditional DCA needs triggerMint"))
        elif r.trigger_mint not in (r.input_mint, r.output_mint):
            out.append(
                V2Finding((*req, "triggerMint"), "triggerMint must be inputMint or outputMint")
            )
        elif r.trigger_mint in STABLECOINS:
            out.append(
                V2Finding(
                    (*req, "triggerMint"),
                    "triggerMint is the stablecoin leg; the API refuses it (use the other mint)",
                )
            )
        if not bounds:
            out.append(
                V2Finding(
                    (*req, "orderType"),
                    "a price_conditional DCA needs minPriceUsd or maxPriceUsd (or both)",
                )
            )
        low, high = r.min_price_usd, r.max_price_usd
        if low is not None and high is not None and low >= high:
            out.append(V2Finding((*req, "minPriceUsd"), "minPriceUsd is not below maxPriceUsd"))
    elif bounds:
        key = "minPriceUsd" if r.min_price_usd is not None else "maxPriceUsd"
        out.append(
            V2Finding(
                (*req, key),
                f"{key} needs orderType: price_conditional (a time_based DCA has no price band)",
            )
        )
    elif r.trigger_mint is not None:
        out.append(
            V2Finding(
                (*req, "triggerMint"),
                "triggerMint is ignored by a time_based DCA",
                warning=True,
            )
        )
    if r.begin_fill_at is not None and parse_instant(r.begin_fill_at) <= now:
        out.append(
            V2Finding((*req, "beginFillAt"), "beginFillAt is in the past; it must be in the future")
        )
    if r.jl_enabled or r.jl_mint is not None:
        key = "jlEnabled" if r.jl_enabled is not None else "jlMint"
        out.append(
            V2Finding(
                (*req, key),
                "Earn While You Wait (jlEnabled, jlMint) is not supported: its deposit goes "
                "into Jupiter Lend, whose program the docs do not name, so txguard could not "
                "check it",
            )
        )
    return out


def _order(r: TriggerV2OrderRequest, now: datetime) -> list[V2Finding]:
    out: list[V2Finding] = []
    req = ("request",)
    if r.order_type != "single":
        out.append(
            V2Finding(
                (*req, "orderType"),
                f"{r.order_type} price orders are not supported by jupcron (only single, "
                "static or trailing)",
            )
        )
    if r.input_mint == r.output_mint:
        out.append(V2Finding((*req, "outputMint"), "outputMint is the same as inputMint"))
    stable = STABLECOINS.get(r.input_mint)
    if stable is not None:
        symbol, decimals = stable
        value = _usd(r.input_amount, decimals)
        if value < MIN_USD:
            out.append(
                V2Finding(
                    (*req, "inputAmount"),
                    f"inputAmount is {value} {symbol}; a Trigger V2 order needs at least "
                    f"{MIN_USD} USD",
                )
            )
    if (r.trigger_price_usd is None) == (r.trailing_bps is None):
        out.append(
            V2Finding(
                (*req, "triggerPriceUsd"),
                "give exactly one of triggerPriceUsd (a fixed trigger) or trailingBps (trailing)",
            )
        )
    if r.trailing_bps is not None:
        wanted = r.input_mint if r.trigger_condition == "below" else r.output_mint
        side = "inputMint" if r.trigger_condition == "below" else "outputMint"
        if r.trigger_mint != wanted:
            out.append(
                V2Finding(
                    (*req, "triggerMint"),
                    f"a trailing order with triggerCondition {r.trigger_condition} needs "
                    f"triggerMint = {side}",
                )
            )
    if (r.expires_at is None) == (r.expires_after is None):
        out.append(
            V2Finding(
                (*req, "expiresAfter"),
                "give exactly one of expiresAfter (a duration from each fire, e.g. 7d) or "
                "expiresAt (milliseconds); every Trigger V2 price order expires",
            )
        )
    elif r.expires_at is not None and r.expires_at <= int(now.timestamp() * 1000):
        out.append(V2Finding((*req, "expiresAt"), "expiresAt is in the past"))
    elif r.expires_after is not None and parse_duration(r.expires_after) <= 0:
        out.append(V2Finding((*req, "expiresAfter"), "expiresAfter must be longer than 0"))
    return out


def active_dca_overlap(request: TriggerV2DcaRequest, schedule: Schedule, now: datetime) -> int:
    """How many of this plan's DCA orders could be active at once (up to 11): each
    fire opens one lasting orderCount x intervalSeconds."""
    lifetime = timedelta(seconds=request.order_count * request.interval_seconds)
    fires = next_fire_times(schedule, now, MAX_ACTIVE_DCA + 1)
    if not fires:
        return 0
    return sum(1 for t in fires if t < fires[0] + lifetime)


def expires_at_ms(request: TriggerV2OrderRequest, fired: datetime) -> int:
    """The order's ``expiresAt`` for a run fired at `fired`."""
    if request.expires_at is not None:
        return request.expires_at
    seconds = parse_duration(request.expires_after or 0)
    return int((fired + timedelta(seconds=seconds)).timestamp() * 1000)
