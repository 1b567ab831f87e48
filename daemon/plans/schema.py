"""The order plan format (DESIGN §3, a contract) as pydantic models.

A plan is ``name``, ``kind``, ``schedule``, ``request`` plus optional
``enabled``, ``description``, per-plan safety settings (``dry_run``,
``max_in_amount``, ``caps``) and, for a swap, the API that serves it
(``swap_api``: ``swap-v2`` or ``ultra-v1``; unset, the daemon config decides).
``request`` mirrors the API body/query of the kind (API.md) minus the wallet
field, which the daemon fills in. Keys are checked strictly: unknown keys are
errors.

Cross-field rules that need positions (stablecoin minimums, caps against the
amount, deprecated forms) live in `checks`, so the loader can point at the
exact key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from jupcron.api.requests import SwapV2OrderRequest, UltraOrderRequest
from jupcron.config import SwapApi
from jupcron.cron import parse_cron
from jupcron.plans import trigger_v2
from jupcron.plans.fields import (
    STABLECOINS as STABLECOINS,  # where it lived before jupcron.plans.fields
)
from jupcron.plans.fields import (
    U64_MAX,
    Amount,
    Duration,
    Price,
    Pubkey,
    _at_least,
    _Model,
)
from jupcron.price.limits import KNOWN_MINTS, PriceLimits, pair_problems
from jupcron.price.oracle import DEFAULT_FEEDS
from jupcron.schedule import (
    Misfire,
    Schedule,
    parse_instant,
    parse_schedule,
    parse_timezone,
)
from jupcron.store.types import PlanKind

RECURRING_MIN_TOTAL_USD = 100
RECURRING_MIN_PER_ORDER_USD = 50
RECURRING_V1_UNMAINTAINED = (
    "Recurring v1 is no longer actively maintained by Jupiter (superseded by DCA under "
    "Trigger V2): consider kind: trigger-v2-dca (see docs/products.md, 'Moving a v1 plan "
    "to V2'); this plan keeps working as it is"
)
# the field the daemon fills in with the wallet, per kind
WALLET_FIELD = {
    PlanKind.RECURRING: "user",
    PlanKind.TRIGGER_CANCEL: "maker",
    PlanKind.SWAP: "taker",
    PlanKind.TRIGGER_V2_DCA: trigger_v2.WALLET_FIELD,
    PlanKind.TRIGGER_V2_ORDER: trigger_v2.WALLET_FIELD,
    PlanKind.TRIGGER_V2_CANCEL: trigger_v2.WALLET_FIELD,
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


Seconds = Annotated[StrictInt, _at_least(60, 10 * 366 * 86400, " seconds")]


# ------------------------------------------------------------------ requests


class TimeParams(_Model):
    in_amount: Amount = Field(alias="inAmount")
    number_of_orders: Annotated[StrictInt, _at_least(2, 1_000_000)] = Field(alias="numberOfOrders")
    interval: Seconds
    min_price: Price | None = Field(default=None, alias="minPrice")
    max_price: Price | None = Field(default=None, alias="maxPrice")
    start_at: Annotated[StrictInt, Field(gt=0, le=U64_MAX)] | None = Field(
        default=None, alias="startAt"
    )


class PriceParams(_Model):
    """Deprecated by Jupiter (price-based recurring orders); accepted with a warning."""

    deposit_amount: Amount = Field(alias="depositAmount")
    increment_usdc_value: Amount = Field(alias="incrementUsdcValue")
    interval: Seconds
    start_at: Annotated[StrictInt, Field(gt=0, le=U64_MAX)] | None = Field(
        default=None, alias="startAt"
    )


class RecurringParams(_Model):
    time: TimeParams | None = None
    price: PriceParams | None = None

    @model_validator(mode="after")
    def _one(self) -> RecurringParams:
        if (self.time is None) == (self.price is None):
            raise ValueError("give exactly one of 'time' or 'price'")
        return self


class RecurringRequest(_Model):
    """POST /recurring/v1/createOrder body, minus ``user``."""

    input_mint: Pubkey = Field(alias="inputMint")
    output_mint: Pubkey = Field(alias="outputMint")
    params: RecurringParams


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


ROUTERS = ("metis", "jupiterz", "dflow", "okx")


def _routers(value: str) -> str:
    names = [n.strip() for n in value.split(",")]
    bad = [n for n in names if n not in ROUTERS]
    if bad:
        raise ValueError(f"unknown router '{bad[0]}' (known: {', '.join(ROUTERS)})")
    return ",".join(names)


class SwapRequest(_Model):
    """GET /swap/v2/order or /ultra/v1/order query, minus ``taker``: the parameters
    either spec lists. Each API is sent only its own (`jupcron.runner.steps.swap_query`;
    `checks` says which of a plan's parameters its API would not be sent)."""

    input_mint: Pubkey = Field(alias="inputMint")
    output_mint: Pubkey = Field(alias="outputMint")
    amount: Amount
    receiver: Pubkey | None = None
    payer: Pubkey | None = None  # both APIs: pays the fees (restricts routing to Metis)
    close_authority: Pubkey | None = Field(default=None, alias="closeAuthority")  # Ultra only
    swap_mode: Literal["ExactIn"] | None = Field(default=None, alias="swapMode")  # Swap V2 only
    referral_account: Pubkey | None = Field(default=None, alias="referralAccount")
    referral_fee: Annotated[StrictInt, _at_least(50, 255, " bps")] | None = Field(
        default=None, alias="referralFee"
    )
    exclude_routers: Annotated[str, AfterValidator(_routers)] | None = Field(
        default=None, alias="excludeRouters"
    )
    exclude_dexes: Annotated[str, Field(min_length=1, max_length=1000)] | None = Field(
        default=None, alias="excludeDexes"
    )
    slippage_bps: Annotated[StrictInt, _at_least(0, 10_000, " bps")] | None = Field(
        default=None, alias="slippageBps"
    )
    broadcast_fee_type: Literal["maxCap", "exactFee"] | None = Field(
        default=None, alias="broadcastFeeType"
    )
    priority_fee_lamports: Annotated[StrictInt, Field(gt=0, le=U64_MAX)] | None = Field(
        default=None, alias="priorityFeeLamports"
    )
    jito_tip_lamports: Annotated[StrictInt, Field(ge=1000, le=U64_MAX)] | None = Field(
        default=None, alias="jitoTipLamports"
    )


TriggerV2DcaRequest = trigger_v2.TriggerV2DcaRequest
TriggerV2OrderRequest = trigger_v2.TriggerV2OrderRequest
TriggerV2CancelRequest = trigger_v2.TriggerV2CancelRequest
Request = (
    RecurringRequest
    | TriggerCancelRequest
    | SwapRequest
    | TriggerV2DcaRequest
    | TriggerV2OrderRequest
    | TriggerV2CancelRequest
)
REQUEST_MODELS: dict[PlanKind, type[Request]] = {
    PlanKind.RECURRING: RecurringRequest,
    PlanKind.TRIGGER_CANCEL: TriggerCancelRequest,
    PlanKind.SWAP: SwapRequest,
    PlanKind.TRIGGER_V2_DCA: TriggerV2DcaRequest,
    PlanKind.TRIGGER_V2_ORDER: TriggerV2OrderRequest,
    PlanKind.TRIGGER_V2_CANCEL: TriggerV2CancelRequest,
}


# ------------------------------------------------------------------ schedule


def _check(parse: Any) -> Any:
    def run(value: Any) -> Any:
        if value is not None:
            parse(value)
        return value

    return run


class ScheduleSpec(_Model):
    cron: Annotated[str, AfterValidator(_check(parse_cron))] | None = None
    every: Duration | None = None
    at: str | None = None
    timezone: Annotated[str, AfterValidator(_check(parse_timezone))] = "UTC"
    start: str | None = None
    end: str | None = None
    jitter: Duration | None = None
    misfire: Misfire = Misfire.RUN_ONCE
    grace: Duration | None = None

    @field_validator("at", "start", "end")
    @classmethod
    def _instant(cls, value: str | None) -> str | None:
        if value is not None:
            parse_instant(value)
        return value

    @model_validator(mode="after")
    def _whole(self) -> ScheduleSpec:
        parse_schedule(self.model_dump(exclude_none=True))
        return self

    def parsed(self) -> Schedule:
        return parse_schedule(self.model_dump(exclude_none=True))


# ------------------------------------------------------------------ plans


class Caps(_Model):
    """Spending caps in base units of the input mint (enforced by the runner)."""

    per_day: Amount | None = None
    per_week: Amount | None = None


class PlanSettings(_Model):
    """A plan's own safety settings, as stored (`PlanSpec.settings_dict`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    dry_run: StrictBool = False
    max_in_amount: Amount | None = None
    caps: Caps = Caps()
    balance_check: StrictBool | None = None  # None: the daemon config's safety.balance_check
    swap_api: SwapApi | None = None  # None: the daemon config's api.swap_api
    limits: PriceLimits | None = None  # price limits (daemon/price/limits.py)
    price_quote: str | None = None  # the report's quote token (symbol or mint)


# ------------------------------------------------------------------ stored plans


def stored_request(kind: PlanKind, data: Mapping[str, Any]) -> Request:
    """A stored request (JSON) as its typed model; raises ValueError if it is not valid.
    Plans with the same request share one (frozen) model."""
    return _stored_request(kind, _key(data))


def stored_settings(data: Mapping[str, Any]) -> PlanSettings:
    """Stored settings as their typed model (shared like `stored_request`)."""
    return _stored_settings(_key(data))


def _key(data: Mapping[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=8192)
def _stored_request(kind: PlanKind, key: str) -> Request:
    return REQUEST_MODELS[kind].model_validate(json.loads(key))


@lru_cache(maxsize=1024)
def _stored_settings(key: str) -> PlanSettings:
    return PlanSettings.model_validate(json.loads(key))


@lru_cache(maxsize=8192)
def request_body(request: Request) -> Mapping[str, Any]:
    """The API body/query of a request (without the wallet field), JSON-ready;
    shared: never change it."""
    return request.model_dump(by_alias=True, exclude_none=True, mode="json")


def _name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(
            "must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return value


class _PlanFields(_Model):
    name: Annotated[str, AfterValidator(_name)]
    kind: PlanKind
    schedule: ScheduleSpec
    enabled: StrictBool = True
    description: Annotated[str, Field(max_length=2000)] | None = None
    dry_run: StrictBool = False
    max_in_amount: Amount | None = None
    caps: Caps | None = None
    swap_api: SwapApi | None = None
    limits: PriceLimits | None = None
    # how `jupcron report` and the page quote this plan's prices: a symbol (SOL, USDC,
    # USDT, JUP) or a mint of its pair; default: a stablecoin, else SOL, else the input
    price_quote: Annotated[str, Field(min_length=1, max_length=64)] | None = None


class PlanHead(_PlanFields):
    """A plan with its request not yet checked (the request's model depends on kind)."""

    request: dict[str, Any]


class PlanSpec(_PlanFields):
    """One valid plan."""

    request: Request

    @model_validator(mode="after")
    def _kind_matches(self) -> PlanSpec:
        if not isinstance(self.request, REQUEST_MODELS[self.kind]):
            raise ValueError(f"request does not match kind '{self.kind}'")
        return self

    def schedule_dict(self) -> dict[str, Any]:
        return self.schedule.parsed().to_dict()

    def request_dict(self) -> dict[str, Any]:
        """The API body/query (without the wallet field), JSON-ready."""
        return self.request.model_dump(by_alias=True, exclude_none=True, mode="json")

    def settings_dict(self) -> dict[str, Any]:
        caps = self.caps or Caps()
        settings: dict[str, Any] = {
            "dry_run": self.dry_run,
            "max_in_amount": self.max_in_amount,
            "caps": {"per_day": caps.per_day, "per_week": caps.per_week},
        }
        if self.swap_api is not None:  # only when set: the hash of every other plan is kept
            settings["swap_api"] = self.swap_api
        if self.limits is not None:  # the same: only when set
            settings["limits"] = self.limits.stored()
        if self.price_quote is not None:  # the same: only when set
            settings["price_quote"] = self.price_quote
        return settings

    def content(self) -> dict[str, Any]:
        """Everything that defines the plan, in stored form (name excluded)."""
        return {
            "kind": str(self.kind),
            "schedule": self.schedule_dict(),
            "request": self.request_dict(),
            "settings": self.settings_dict(),
            "enabled": self.enabled,
            "description": self.description,
        }

    def content_hash(self) -> str:
        text = json.dumps(self.content(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


# ------------------------------------------------------------------ cross-field checks


@dataclass(frozen=True)
class Finding:
    """A rule broken across fields: where (relative to the plan) and what."""

    loc: tuple[str | int, ...]
    message: str
    warning: bool = False


def in_amount_of(request: Request) -> tuple[str, int, tuple[str, ...]] | None:
    """(input mint, total input amount, where it is) for kinds that spend."""
    if isinstance(request, SwapRequest):
        return request.input_mint, request.amount, ("amount",)
    if isinstance(request, TriggerV2DcaRequest | TriggerV2OrderRequest):
        return request.input_mint, request.input_amount, ("inputAmount",)
    if isinstance(request, RecurringRequest):
        if request.params.time is not None:
            return request.input_mint, request.params.time.in_amount, ("params", "time", "inAmount")
        if request.params.price is not None:
            where = ("params", "price", "depositAmount")
            return request.input_mint, request.params.price.deposit_amount, where
    return None


def _usd(amount: int | Decimal, decimals: int) -> Decimal:
    return (Decimal(amount) / (Decimal(10) ** decimals)).quantize(Decimal("0.01"))


ULTRA_V1_NOTICE = (
    "swap_api: ultra-v1 is no longer actively maintained by Jupiter; Swap V2 serves the same "
    "request: remove swap_api (or set swap-v2) to move this plan (docs/products.md)"
)


def checks(
    request: Request,
    max_in_amount: int | None = None,
    caps: Caps | None = None,
    swap_api: str | None = None,
    now: datetime | None = None,
    limits: PriceLimits | None = None,
) -> list[Finding]:
    """Rules across fields; locations are relative to the plan (`now`: for dates)."""
    out: list[Finding] = []
    out.extend(limit_checks(request, limits))
    if swap_api is not None and not isinstance(request, SwapRequest):
        out.append(Finding(("swap_api",), "swap_api applies to swap plans only"))
    elif swap_api == "ultra-v1":
        out.append(Finding(("swap_api",), ULTRA_V1_NOTICE, warning=True))
    if isinstance(request, SwapRequest):
        out.extend(swap_param_checks(request, swap_api))
    if isinstance(request, RecurringRequest | SwapRequest) and (
        request.input_mint == request.output_mint
    ):
        out.append(Finding(("request", "outputMint"), "outputMint is the same as inputMint"))
    if isinstance(request, RecurringRequest):
        out.extend(_recurring(request))
    if isinstance(request, TriggerV2DcaRequest | TriggerV2OrderRequest | TriggerV2CancelRequest):
        out.extend(Finding(f.loc, f.message, f.warning) for f in trigger_v2.checks(request, now))
    spent = in_amount_of(request)
    if spent is not None:
        _, amount, where = spent
        if max_in_amount is not None and amount > max_in_amount:
            out.append(
                Finding(
                    ("request", *where),
                    f"{where[-1]} {amount} is above this plan's max_in_amount {max_in_amount}",
                )
            )
    if caps is not None and caps.per_day and caps.per_week and caps.per_week < caps.per_day:
        out.append(Finding(("caps", "per_week"), "caps.per_week is smaller than caps.per_day"))
    return out


def swap_param_checks(request: SwapRequest, swap_api: str | None) -> list[Finding]:
    """Parameters the plan's swap API does not list are never sent to it: an error
    when the plan names its API (when the daemon config decides, a run records what
    it left out, ``not_sent`` in its ``ordered`` event)."""
    given = request_body(request)
    out: list[Finding] = []
    if "closeAuthority" in given and "payer" not in given:
        message = "closeAuthority requires payer (Ultra ignores it without one)"
        out.append(Finding(("request", "closeAuthority"), message))
    for api, listed in (
        ("swap-v2", SwapV2OrderRequest.params),
        ("ultra-v1", UltraOrderRequest.params),
    ):
        other = "ultra-v1" if api == "swap-v2" else "swap-v2"
        for key in sorted(k for k in given if k not in listed):
            if swap_api == api:
                message = f"{key} is not a parameter of {api}'s /order (only {other}'s)"
                out.append(Finding(("request", key), message))
    return out


# the kinds whose signed transaction guarantees an output txguard can hold to `limits`
PRICED_KINDS = (SwapRequest, RecurringRequest)


def limit_checks(request: Request, limits: PriceLimits | None) -> list[Finding]:
    """``limits`` against the plan's kind and pair (price forms need no chain here)."""
    if limits is None:
        return []
    if isinstance(request, TriggerV2DcaRequest | TriggerV2OrderRequest):
        return [Finding(("limits",), "a Trigger V2 order is priced by its own request fields "
                        "(minPriceUsd/maxPriceUsd; triggerPriceUsd with slippageBps): Jupiter "
                        "fills it later, so the deposit jupcron signs guarantees no output to "
                        "hold to limits (docs/price-protection.md)")]  # fmt: skip
    if not isinstance(request, PRICED_KINDS):
        return [Finding(("limits",), "limits apply to plans that trade now or on a "
                        "schedule the order carries (swap, recurring)")]  # fmt: skip
    out = [
        Finding(("limits", key), f"limits.{key}: {message}")
        for key, message in pair_problems(limits, request.input_mint, request.output_mint)
    ]
    if isinstance(request, RecurringRequest) and request.params.time is not None:
        time = request.params.time
        if time.min_price is None and time.max_price is None:
            out.append(
                Finding(
                    ("limits",),
                    "a recurring order carries a per-cycle minimum out only when params.time "
                    "sets minPrice or maxPrice; txguard holds that minimum to these limits, so "
                    "without one its runs are refused (docs/price-protection.md)",
                    warning=True,
                )
            )
    return out


def price_notes(
    request: Request, limits: PriceLimits | None, feeds: Collection[str] = DEFAULT_FEEDS
) -> list[Finding]:
    """Warnings: a trading plan with neither a price limit nor a reference price for its
    pair (`feeds`: mints with an oracle feed), and a price limit on a mint whose
    decimals only the chain can tell."""
    if not isinstance(request, PRICED_KINDS):
        return []
    pair = (request.input_mint, request.output_mint)
    out: list[Finding] = []
    uncovered = [mint for mint in pair if mint not in feeds]
    if limits is None and uncovered:
        out.append(
            Finding(
                ("request", "outputMint" if uncovered[0] == pair[1] else "inputMint"),
                f"neither a price limit (limits:) nor a reference price (no oracle feed for "
                f"{uncovered[0]}; add one under price.feeds): only slippage bounds what this "
                "plan receives (docs/price-protection.md)",
                warning=True,
            )
        )
    if limits is not None and limits.has_price:
        for mint in pair:
            if mint not in KNOWN_MINTS:
                out.append(
                    Finding(
                        ("limits", "quote"),
                        f"the decimals of {mint} are not built in: runs read them through "
                        "rpc.url, and refuse to sign when they cannot",
                        warning=True,
                    )
                )
    return out


def _recurring(request: RecurringRequest) -> list[Finding]:
    out: list[Finding] = []
    stable = STABLECOINS.get(request.input_mint)
    time, price = request.params.time, request.params.price
    if price is not None:
        out.append(
            Finding(
                ("request", "params", "price"),
                "params.price (price-based recurring) is deprecated by Jupiter; use params.time "
                "(its runs will be rejected: the Value Average program's interface is not "
                "public, so txguard cannot check what it is told)",
                warning=True,
            )
        )
    if time is not None:
        low, high = time.min_price, time.max_price
        if low is not None and high is not None and low > high:
            where = ("request", "params", "time", "minPrice")
            out.append(Finding(where, "minPrice is above maxPrice"))
        if stable is not None:
            symbol, decimals = stable
            total = _usd(time.in_amount, decimals)
            where = ("request", "params", "time", "inAmount")
            if total < RECURRING_MIN_TOTAL_USD:
                out.append(
                    Finding(
                        where,
                        f"inAmount is {total} {symbol}; a recurring order needs at least "
                        f"{RECURRING_MIN_TOTAL_USD} {symbol} in total",
                    )
                )
            per_order = _usd(Decimal(time.in_amount) / time.number_of_orders, decimals)
            if per_order < RECURRING_MIN_PER_ORDER_USD:
                out.append(
                    Finding(
                        where,
                        f"each order would be {per_order} {symbol} (inAmount / numberOfOrders); "
                        f"the minimum is {RECURRING_MIN_PER_ORDER_USD} {symbol} per order",
                    )
                )
    if price is not None and stable is not None:
        symbol, decimals = stable
        total = _usd(price.deposit_amount, decimals)
        if total < RECURRING_MIN_TOTAL_USD:
            out.append(
                Finding(
                    ("request", "params", "price", "depositAmount"),
                    f"depositAmount is {total} {symbol}; a recurring order needs at least "
                    f"{RECURRING_MIN_TOTAL_USD} {symbol} in total",
                )
            )
    return out
