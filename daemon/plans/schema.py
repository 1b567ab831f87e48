"""The order plan format (DESIGN §3, a contract) as pydantic models.

A plan is ``name``, ``kind``, ``schedule``, ``request`` plus optional
``enabled``, ``description``, per-plan safety settings (``dry_run``,
``max_in_amount``, ``caps``) and, for a swap, the API that serves it
(``swap_api``: ``swap-v2`` or ``ultra-v1``; unset, the daemon config decides).
``request`` mirrors the API body/query of the kind (API.md) minus the wallet
field, which the daemon fills in. Keys are checked strictly: unknown keys are
errors.

Cross-field rules that need positions (stablecoin minimums, caps against the
amount, deprecated forms) live in `jupcron.plans.rules`, so the loader can point
at the exact key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    field_validator,
    model_validator,
)

from jupcron.config import SwapApi
from jupcron.config.wallets import WALLET_NAME, WALLET_NAME_RULE
from jupcron.domain import DEFAULT_WALLET, PlanKind
from jupcron.plans.fields import Amount, Duration, _Model, dumped
from jupcron.price.limits import PriceLimits
from jupcron.products import kinds
from jupcron.products.findings import Finding as Finding
from jupcron.products.recurring.model import (
    RECURRING_MIN_PER_ORDER_USD as RECURRING_MIN_PER_ORDER_USD,
)
from jupcron.products.recurring.model import (
    RECURRING_MIN_TOTAL_USD as RECURRING_MIN_TOTAL_USD,
)
from jupcron.products.recurring.model import (
    RECURRING_V1_UNMAINTAINED as RECURRING_V1_UNMAINTAINED,
)
from jupcron.products.recurring.model import RecurringRequest
from jupcron.products.recurring_cancel.model import RecurringCancelRequest
from jupcron.products.swap.model import ROUTERS as ROUTERS
from jupcron.products.swap.model import ULTRA_V1_NOTICE as ULTRA_V1_NOTICE
from jupcron.products.swap.model import SwapRequest
from jupcron.products.trigger.model import TriggerCancelRequest
from jupcron.products.trigger_batch.model import TriggerCancelBatchRequest
from jupcron.products.trigger_v2.model import (
    TriggerV2CancelRequest,
    TriggerV2DcaRequest,
    TriggerV2OrderRequest,
)
from jupcron.scheduling.cron import parse_cron
from jupcron.scheduling.schedule import (
    Misfire,
    Schedule,
    parse_instant,
    parse_schedule,
    plan_timezone,
)

# the field the daemon fills in with the wallet, per kind
WALLET_FIELD = {kind: spec.wallet_field for kind, spec in kinds.SPECS.items()}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


# ------------------------------------------------------------------ requests
# each kind's one request model lives with its product (daemon/products/)

Request = (
    RecurringRequest
    | RecurringCancelRequest
    | TriggerCancelRequest
    | TriggerCancelBatchRequest
    | SwapRequest
    | TriggerV2DcaRequest
    | TriggerV2OrderRequest
    | TriggerV2CancelRequest
)
REQUEST_MODELS: dict[PlanKind, type[Request]] = {
    kind: spec.model  # type: ignore[misc]
    for kind, spec in kinds.SPECS.items()
}


# ------------------------------------------------------------------ schedule


def _check(parse: Any) -> Any:
    def run(value: Any) -> Any:
        if value is not None:
            parse(value)
        return value

    return run


def frozen(value: Any) -> Any:
    """A key that is equal only for equal values of the same types and text (``1`` is
    not ``True``, ``1.0`` not ``1.00``): checks of one value hold for the other.
    `TypeError` (from `hash`) if a value cannot be a key."""
    kind = type(value)
    if kind is dict:
        return (dict, tuple([
            (type(k), k, (type(v), v) if type(v) in _PLAIN else frozen(v))
            for k, v in value.items()
        ]))  # fmt: skip
    if kind is list:
        return (list, tuple([frozen(v) for v in value]))
    if kind in _PLAIN:
        return (kind, value)
    return (kind, repr(value))


_PLAIN = frozenset({str, int, bool, type(None)})  # equal only when the same value


class Shared:
    """Models checked once per distinct input (`frozen`): a large apply's plans repeat
    the same few requests and schedules, and a frozen model is shared as `stored_request`
    shares them. Only a valid input is kept: an invalid one is checked (and explained)
    each time."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self.known: dict[Any, Any] = {}

    def key(self, model: type, data: Any) -> Any:
        """`data`'s key, or None if it cannot have one: a value that cannot be hashed, or
        mappings nested too deep for `frozen` to walk (a few hundred levels, a few KB of
        ``{a: {a: …}}``, which the YAML reader takes: its `RecursionError` ended the
        load, and SIGHUP's reload the daemon). Such input is checked, and explained,
        as any other that is not kept."""
        if type(data) is not dict:
            return None
        try:
            key = (model, frozen(data))
            hash(key)
        except (TypeError, RecursionError):
            return None
        return key

    def keep(self, key: Any, model: Any) -> None:
        if key is not None and len(self.known) < self.limit:
            self.known[key] = model


class ScheduleSpec(_Model):
    cron: Annotated[str, AfterValidator(_check(parse_cron))] | None = None
    every: Duration | None = None
    at: str | None = None
    timezone: Annotated[str, AfterValidator(_check(plan_timezone))] = "UTC"
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

    _schedule: Schedule | None = PrivateAttr(default=None)  # as checked (it is frozen)
    _stored: dict[str, Any] | None = PrivateAttr(default=None)  # its `Schedule.to_dict`

    @model_validator(mode="after")
    def _whole(self) -> ScheduleSpec:
        private = self.__pydantic_private__
        if private is not None and private.get("_stored") is not None:
            return self  # a model checked already, given as a plan's (pydantic runs this again)
        schedule = parse_schedule(self.model_dump(exclude_none=True))
        if schedule.grace < 1:  # a fire starts a moment after its slot: every one "missed"
            raise ValueError("grace must be at least 1s (how late a fire may still start)")
        self._schedule = schedule
        self._stored = schedule.to_dict()
        return self

    def parsed(self) -> Schedule:
        return self._schedule or parse_schedule(self.model_dump(exclude_none=True))

    def stored(self) -> dict[str, Any]:
        """The schedule as stored (`Schedule.to_dict`), a fresh mapping."""
        # (read past pydantic's `__getattr__`, which a private attribute is read through)
        private = self.__pydantic_private__
        kept = private.get("_stored") if private is not None else None
        if kept is None:
            return self.parsed().to_dict()
        return dict(kept)  # (of plain values: a copy of its own)


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


def _storable(value: str) -> str:
    """Free text the store can keep: PostgreSQL refuses a NUL character in text, which
    YAML (``"\\0"``, ``"\\x00"``) and JSON (``"\\u0000"``) can write with no NUL byte in
    the file; the apply stopped at its write with the database's error, and SIGHUP's
    reload ended the daemon."""
    if "\x00" in value:
        raise ValueError("holds a NUL character (\\0), which the store cannot keep: remove it")
    return value


def _wallet_name(value: str) -> str:
    if not WALLET_NAME.fullmatch(value):
        raise ValueError(f"must be {WALLET_NAME_RULE}")
    return value


class _PlanFields(_Model):
    name: Annotated[str, AfterValidator(_name)]
    kind: PlanKind
    schedule: ScheduleSpec
    enabled: StrictBool = True
    description: Annotated[str, Field(max_length=2000), AfterValidator(_storable)] | None = None
    dry_run: StrictBool = False
    max_in_amount: Amount | None = None
    caps: Caps | None = None
    swap_api: SwapApi | None = None
    limits: PriceLimits | None = None
    # how `jupcron report` and the page quote this plan's prices: a symbol (SOL, USDC,
    # USDT, JUP) or a mint of its pair; default: a stablecoin, else SOL, else the input
    price_quote: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    # which configured wallet signs this plan's runs (the daemon config's `wallets:`,
    # or `default`: wallet.keypair); `plans validate` checks the config has it
    wallet: Annotated[str, AfterValidator(_wallet_name)] = DEFAULT_WALLET


class PlanHead(_PlanFields):
    """A plan with its request not yet checked (the request's model depends on kind)."""

    request: dict[str, Any]


class PlanSpec(_PlanFields):
    """One valid plan."""

    request: Request

    @model_validator(mode="after")
    def _kind_matches(self) -> PlanSpec:
        if not isinstance(self.request, kinds.spec(self.kind).model):
            raise ValueError(f"request does not match kind '{self.kind}'")
        return self

    @classmethod
    def of(cls, head: PlanHead, request: Request) -> PlanSpec:
        """A checked `head` with its checked `request` (its fields not checked again)."""
        if not isinstance(request, kinds.spec(head.kind).model):
            raise ValueError(f"request does not match kind '{head.kind}'")
        # what `model_construct` sets, without its walk over every field and default
        # (a sixth of reading a plan): the head's values, checked, and the request
        spec = cls.__new__(cls)
        values = dict(head.__dict__)
        values["request"] = request
        object.__setattr__(spec, "__dict__", values)
        object.__setattr__(spec, "__pydantic_fields_set__", head.model_fields_set | {"request"})
        object.__setattr__(spec, "__pydantic_extra__", None)
        object.__setattr__(spec, "__pydantic_private__", None)
        return spec

    def schedule_dict(self) -> dict[str, Any]:
        return self.schedule.stored()

    def request_dict(self) -> dict[str, Any]:
        """The API body/query (without the wallet field), JSON-ready (a fresh copy of
        the one made for this request: plans share requests, `Shared`)."""
        body: dict[str, Any] = _json_copy(dumped(self.request))
        return body

    def settings_dict(self) -> dict[str, Any]:
        caps = self.caps or _NO_CAPS
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
        """Everything that defines the plan, in stored form (name excluded); the
        wallet only when it is not the default (`wallet_content`)."""
        return {
            "kind": str(self.kind),
            "schedule": self.schedule_dict(),
            "request": self.request_dict(),
            "settings": self.settings_dict(),
            "enabled": self.enabled,
            "description": self.description,
            **wallet_content(self.wallet),
        }

    def content_hash(self) -> str:
        text = json.dumps(self.content(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


_NO_CAPS = Caps()


def _json_copy(value: Any) -> Any:
    if type(value) is dict:
        return {k: _json_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_json_copy(v) for v in value]
    return value


# `PlanSpec.of` builds a spec as `model_construct` would, which holds while a spec has
# the head's fields and a request, no private attributes and no extra keys
assert set(PlanSpec.model_fields) == set(PlanHead.model_fields)
assert not PlanSpec.__private_attributes__
assert PlanSpec.model_config.get("extra") != "allow"


def wallet_content(wallet: str) -> dict[str, str]:
    """A plan content's ``wallet`` entry: none for the default wallet, so the hash of
    every plan stored before there were several wallets is kept (no spurious change),
    and a plan moving to another wallet is a change."""
    return {} if wallet == DEFAULT_WALLET else {"wallet": wallet}
