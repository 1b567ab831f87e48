"""Swap V2's spec (openapi-spec/swap/v2/swap.yaml): ``referralAccount`` "must be used
together with ``referralFee``" and ``referralFee`` "together with ``referralAccount``";
Ultra's fee guide passes both. A plan with one of them is told so when it is loaded
(a warning), not sent each slot for Jupiter to refuse or to drop the referral."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from solders.pubkey import Pubkey

from jupcron.products.spec import CheckContext
from jupcron.products.swap.model import SWAP_V2, ULTRA_V1, SwapRequest, checks

SOL = "So11111111111111111111111111111111111111112"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
ACCOUNT = str(Pubkey.from_string("DkiqsTrw1u1bYFumumC7sCG2S8K25qc2vemJFHyW2wJc"))


def _said(swap_api: str | None, **extra: object) -> list[str]:
    request = SwapRequest.model_validate(
        {"inputMint": USDC, "outputMint": SOL, "amount": 1000000, **extra}
    )
    context = CheckContext(now=datetime(2030, 1, 1, tzinfo=UTC), swap_api=swap_api)
    found = checks(request, context)
    return [".".join(str(p) for p in f.loc) for f in found if f.loc != ("swap_api",)]


@pytest.mark.parametrize("swap_api", [SWAP_V2, ULTRA_V1, None])
@pytest.mark.parametrize(
    ("extra", "where"),
    [({"referralAccount": ACCOUNT}, "request.referralFee"),
     ({"referralFee": 50}, "request.referralAccount")],
)  # fmt: skip
def test_one_referral_parameter_without_the_other_is_warned(
    swap_api: str | None, extra: dict[str, object], where: str
) -> None:
    assert where in _said(swap_api, **extra)


@pytest.mark.parametrize("swap_api", [SWAP_V2, ULTRA_V1, None])
def test_both_or_neither_pass(swap_api: str | None) -> None:
    assert _said(swap_api) == []
    assert _said(swap_api, referralAccount=ACCOUNT, referralFee=50) == []
