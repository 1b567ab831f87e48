"""The request side of every plan kind, looked up by kind (or by the request's type):
the one place that says which product a kind is. The run's steps are
`jupcron.products.registry`."""

from __future__ import annotations

from typing import Any

from jupcron.domain import PlanKind
from jupcron.products.recurring.model import SPEC as RECURRING
from jupcron.products.recurring_cancel.model import SPEC as RECURRING_CANCEL
from jupcron.products.spec import RequestSpec
from jupcron.products.swap.model import SPEC as SWAP
from jupcron.products.trigger.model import SPEC as TRIGGER_CANCEL
from jupcron.products.trigger_batch.model import SPEC as TRIGGER_CANCEL_BATCH
from jupcron.products.trigger_v2 import spec as v2

SPECS: dict[PlanKind, RequestSpec] = {
    PlanKind.RECURRING: RECURRING,
    PlanKind.RECURRING_CANCEL: RECURRING_CANCEL,
    PlanKind.TRIGGER_CANCEL: TRIGGER_CANCEL,
    PlanKind.TRIGGER_CANCEL_BATCH: TRIGGER_CANCEL_BATCH,
    PlanKind.SWAP: SWAP,
    PlanKind.TRIGGER_V2_DCA: v2.DCA,
    PlanKind.TRIGGER_V2_ORDER: v2.ORDER,
    PlanKind.TRIGGER_V2_CANCEL: v2.CANCEL,
}
_BY_MODEL: dict[type[Any], RequestSpec] = {spec.model: spec for spec in SPECS.values()}
WALLET_FIELDS: frozenset[str] = frozenset(spec.wallet_field for spec in SPECS.values())


def spec(kind: PlanKind) -> RequestSpec:
    """The request side of `kind`."""
    return SPECS[kind]


def spec_of(request: Any) -> RequestSpec:
    """The request side of the kind whose model `request` is."""
    return _BY_MODEL[type(request)]
