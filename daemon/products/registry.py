"""Every plan kind's run steps (`Product`), looked up once by kind: the runner's one
way to know what a kind does. Adding a product is its package plus a line here and
in `jupcron.products.kinds`."""

from __future__ import annotations

from jupcron.domain import PlanKind
from jupcron.products.base import Product
from jupcron.products.recurring.steps import PRODUCT as RECURRING
from jupcron.products.recurring_cancel.steps import PRODUCT as RECURRING_CANCEL
from jupcron.products.swap.steps import PRODUCT as SWAP
from jupcron.products.trigger.steps import PRODUCT as TRIGGER_CANCEL
from jupcron.products.trigger_batch.steps import PRODUCT as TRIGGER_CANCEL_BATCH
from jupcron.products.trigger_v2 import steps as v2

PRODUCTS: dict[PlanKind, Product] = {
    PlanKind.RECURRING: RECURRING,
    PlanKind.RECURRING_CANCEL: RECURRING_CANCEL,
    PlanKind.TRIGGER_CANCEL: TRIGGER_CANCEL,
    PlanKind.TRIGGER_CANCEL_BATCH: TRIGGER_CANCEL_BATCH,
    PlanKind.SWAP: SWAP,
    PlanKind.TRIGGER_V2_DCA: v2.DCA,
    PlanKind.TRIGGER_V2_ORDER: v2.ORDER,
    PlanKind.TRIGGER_V2_CANCEL: v2.CANCEL,
}


def product(kind: PlanKind) -> Product:
    """The run steps of `kind`."""
    return PRODUCTS[kind]
