"""The request side of Trigger V2's three kinds (DCA, price order, cancel)."""

from __future__ import annotations

from typing import Any

from jupcron.products.findings import Finding
from jupcron.products.spec import CheckContext, RequestSpec, Spent
from jupcron.products.trigger_v2 import checks as rules
from jupcron.products.trigger_v2.model import (
    WALLET_FIELD,
    TriggerV2CancelRequest,
    TriggerV2DcaRequest,
    TriggerV2OrderRequest,
)

NOT_PRICED = (
    "a Trigger V2 order is priced by its own request fields (minPriceUsd/maxPriceUsd; "
    "triggerPriceUsd with slippageBps): Jupiter fills it later, so the deposit jupcron "
    "signs guarantees no output to hold to limits (docs/price-protection.md)"
)


def _checks(request: Any, context: CheckContext) -> list[Finding]:
    return rules.checks(request, context.now)


def _spend(request: TriggerV2DcaRequest | TriggerV2OrderRequest) -> Spent:
    return request.input_mint, request.input_amount, ("inputAmount",)


def _pair(request: TriggerV2DcaRequest | TriggerV2OrderRequest) -> tuple[str, str]:
    return request.input_mint, request.output_mint


DCA = RequestSpec(
    model=TriggerV2DcaRequest, wallet_field=WALLET_FIELD, checks=_checks, pair=_pair,
    spend=_spend, not_priced=NOT_PRICED,
    schedule_checks=rules.dca_overlap,
)  # fmt: skip
ORDER = RequestSpec(
    model=TriggerV2OrderRequest, wallet_field=WALLET_FIELD, checks=_checks, pair=_pair,
    spend=_spend, not_priced=NOT_PRICED,
)  # fmt: skip
CANCEL = RequestSpec(model=TriggerV2CancelRequest, wallet_field=WALLET_FIELD, checks=_checks)
