"""Every plan kind's run steps (`Product`), looked up once by kind: the runner's one
way to know what a kind does. Adding a product is its package, its kind's line in
`jupcron.products.kinds`, and its steps named here."""

from __future__ import annotations

from jupcron.domain import PlanKind
from jupcron.products.base import Product
from jupcron.products.kinds import SPECS
from jupcron.products.recurring.steps import PRODUCT as RECURRING
from jupcron.products.recurring_cancel.steps import PRODUCT as RECURRING_CANCEL
from jupcron.products.swap.steps import PRODUCT as SWAP
from jupcron.products.trigger.steps import PRODUCT as TRIGGER_CANCEL
from jupcron.products.trigger_batch.steps import PRODUCT as TRIGGER_CANCEL_BATCH
from jupcron.products.trigger_v2 import steps as v2

_STEPS = (RECURRING, RECURRING_CANCEL, TRIGGER_CANCEL, TRIGGER_CANCEL_BATCH, SWAP, v2.DCA, v2.ORDER,
          v2.CANCEL)  # fmt: skip
_BY_MODEL = {steps.request.model: steps for steps in _STEPS}
# which product a kind is, as `jupcron.products.kinds` says (by its request's model)
PRODUCTS: dict[PlanKind, Product] = {kind: _BY_MODEL[spec.model] for kind, spec in SPECS.items()}


def product(kind: PlanKind) -> Product:
    """The run steps of `kind`."""
    return PRODUCTS[kind]
