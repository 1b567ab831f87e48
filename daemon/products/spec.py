"""The request side of a product: what `jupcron.plans` and pre-flight need to know
of a plan kind, with no I/O (the run's steps are `jupcron.products.base.Product`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from jupcron.price.limits import PriceLimits
from jupcron.products.findings import Finding
from jupcron.scheduling.schedule import Schedule

# (input mint, total input amount, where it is in the request)
Spent = tuple[str, int, tuple[str, ...]]

NOT_PRICED = (
    "limits apply to plans that trade now or on a schedule the order carries (swap, recurring)"
)


@dataclass(frozen=True)
class CheckContext:
    """What a kind's cross-field rules may look at besides the request."""

    now: datetime
    limits: PriceLimits | None = None
    swap_api: str | None = None


def _nothing(request: Any, context: CheckContext) -> list[Finding]:
    return []


def _no_pair(request: Any) -> tuple[str, str] | None:
    return None


def _no_spend(request: Any) -> Spent | None:
    return None


@dataclass(frozen=True)
class RequestSpec:
    """A plan kind's request: its one model (plans and the API client both check
    against it), the wallet field the daemon fills in, and its rules."""

    model: type[BaseModel]
    wallet_field: str
    checks: Callable[[Any, CheckContext], list[Finding]] = _nothing
    pair: Callable[[Any], tuple[str, str] | None] = _no_pair  # (input, output) if it trades
    spend: Callable[[Any], Spent | None] = _no_spend  # None: a cancel spends nothing
    priced: bool = False  # its signed transaction guarantees an output `limits` can hold
    not_priced: str = NOT_PRICED  # why `limits` do not apply (when not `priced`)
    swap_api: bool = False  # a plan's ``swap_api`` applies
    schedule_checks: Callable[[Any, Schedule, datetime], list[Finding]] | None = None
    suggestion: str | None = None  # said of every plan of the kind (a warning)

    def output_mint(self, request: Any) -> str | None:
        pair = self.pair(request)
        return None if pair is None else pair[1]
