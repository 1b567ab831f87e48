"""Trigger V2's documented limits that span fields (minimum USD a round, price
bands, trailing direction, dates); each finding names the exact key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from jupcron.mints import STABLECOINS
from jupcron.products.findings import Finding, usd
from jupcron.products.trigger_v2.model import (
    MAX_ACTIVE_DCA,
    MIN_USD,
    MIN_USD_TOLERANCE,
    TriggerV2DcaRequest,
    TriggerV2OrderRequest,
    TriggerV2Request,
)
from jupcron.scheduling.schedule import Schedule, next_fire_times, parse_duration, parse_instant


def checks(request: TriggerV2Request, now: datetime | None = None) -> list[Finding]:
    """The documented limits across fields; `now` (UTC) for the dates."""
    now = now or datetime.now(UTC)
    if isinstance(request, TriggerV2DcaRequest):
        return _dca(request, now)
    if isinstance(request, TriggerV2OrderRequest):
        return _order(request, now)
    return []


def _dca(r: TriggerV2DcaRequest, now: datetime) -> list[Finding]:
    out: list[Finding] = []
    req = ("request",)
    if r.input_mint == r.output_mint:
        out.append(Finding((*req, "outputMint"), "outputMint is the same as inputMint"))
    stable = STABLECOINS.get(r.input_mint)
    if stable is not None:
        symbol, decimals = stable
        per_round = usd(Decimal(r.input_amount) / r.order_count, decimals)
        if per_round < MIN_USD - MIN_USD_TOLERANCE:
            out.append(
                Finding(
                    (*req, "inputAmount"),
                    f"each round would be {per_round} {symbol} (inputAmount / orderCount); "
                    f"Trigger V2 DCA needs at least {MIN_USD} USD a round",
                )
            )
    bounds = r.min_price_usd is not None or r.max_price_usd is not None
    if r.order_type == "price_conditional":
        if r.trigger_mint is None:
            out.append(Finding((*req, "orderType"), "a price_conditional DCA needs triggerMint"))
        elif r.trigger_mint not in (r.input_mint, r.output_mint):
            out.append(
                Finding((*req, "triggerMint"), "triggerMint must be inputMint or outputMint")
            )
        elif r.trigger_mint in STABLECOINS:
            out.append(
                Finding(
                    (*req, "triggerMint"),
                    "triggerMint is the stablecoin leg; the API refuses it (use the other mint)",
                )
            )
        if not bounds:
            out.append(
                Finding(
                    (*req, "orderType"),
                    "a price_conditional DCA needs minPriceUsd or maxPriceUsd (or both)",
                )
            )
        low, high = r.min_price_usd, r.max_price_usd
        if low is not None and high is not None and low >= high:
            out.append(Finding((*req, "minPriceUsd"), "minPriceUsd is not below maxPriceUsd"))
    elif bounds:
        key = "minPriceUsd" if r.min_price_usd is not None else "maxPriceUsd"
        out.append(
            Finding(
                (*req, key),
                f"{key} needs orderType: price_conditional (a time_based DCA has no price band)",
            )
        )
    elif r.trigger_mint is not None:
        out.append(
            Finding(
                (*req, "triggerMint"),
                "triggerMint is ignored by a time_based DCA",
                warning=True,
            )
        )
    if r.begin_fill_at is not None and parse_instant(r.begin_fill_at) <= now:
        out.append(
            Finding((*req, "beginFillAt"), "beginFillAt is in the past; it must be in the future")
        )
    if r.jl_enabled or r.jl_mint is not None:
        key = "jlEnabled" if r.jl_enabled is not None else "jlMint"
        out.append(
            Finding(
                (*req, key),
                "Earn While You Wait (jlEnabled, jlMint) is not supported: its deposit goes "
                "into Jupiter Lend, whose program the docs do not name, so txguard could not "
                "check it",
            )
        )
    return out


def _order(r: TriggerV2OrderRequest, now: datetime) -> list[Finding]:
    out: list[Finding] = []
    req = ("request",)
    if r.order_type != "single":
        out.append(
            Finding(
                (*req, "orderType"),
                f"{r.order_type} price orders are not supported by jupcron (only single, "
                "static or trailing)",
            )
        )
    if r.input_mint == r.output_mint:
        out.append(Finding((*req, "outputMint"), "outputMint is the same as inputMint"))
    stable = STABLECOINS.get(r.input_mint)
    if stable is not None:
        symbol, decimals = stable
        value = usd(r.input_amount, decimals)
        if value < MIN_USD:
            out.append(
                Finding(
                    (*req, "inputAmount"),
                    f"inputAmount is {value} {symbol}; a Trigger V2 order needs at least "
                    f"{MIN_USD} USD",
                )
            )
    if (r.trigger_price_usd is None) == (r.trailing_bps is None):
        out.append(
            Finding(
                (*req, "triggerPriceUsd"),
                "give exactly one of triggerPriceUsd (a fixed trigger) or trailingBps (trailing)",
            )
        )
    if r.trailing_bps is not None:
        wanted = r.input_mint if r.trigger_condition == "below" else r.output_mint
        side = "inputMint" if r.trigger_condition == "below" else "outputMint"
        if r.trigger_mint != wanted:
            out.append(
                Finding(
                    (*req, "triggerMint"),
                    f"a trailing order with triggerCondition {r.trigger_condition} needs "
                    f"triggerMint = {side}",
                )
            )
    if (r.expires_at is None) == (r.expires_after is None):
        out.append(
            Finding(
                (*req, "expiresAfter"),
                "give exactly one of expiresAfter (a duration from each fire, e.g. 7d) or "
                "expiresAt (milliseconds); every Trigger V2 price order expires",
            )
        )
    elif r.expires_at is not None and r.expires_at <= int(now.timestamp() * 1000):
        out.append(Finding((*req, "expiresAt"), "expiresAt is in the past"))
    elif r.expires_after is not None and parse_duration(r.expires_after) <= 0:
        out.append(Finding((*req, "expiresAfter"), "expiresAfter must be longer than 0"))
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


def dca_overlap(request: TriggerV2DcaRequest, schedule: Schedule, now: datetime) -> list[Finding]:
    """A warning when this plan alone could keep more DCA orders active than the
    wallet may have (each fire opens one for orderCount x intervalSeconds)."""
    if active_dca_overlap(request, schedule, now) <= MAX_ACTIVE_DCA:
        return []
    message = (
        f"this schedule fires again before its DCA order ends (orderCount x intervalSeconds), "
        f"so more than {MAX_ACTIVE_DCA} of its orders could be active at once; Trigger V2 "
        f"allows {MAX_ACTIVE_DCA} active DCA orders a wallet and refuses the next"
    )
    return [Finding(("schedule",), message, warning=True)]
