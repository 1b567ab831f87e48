"""Swaps (Swap V2 and Ultra v1): the ``GET /order`` query, minus ``taker`` — one
model of it (`SwapRequest`, the plan's and the client's), with each API's view
(`SwapV2OrderRequest`, `UltraOrderRequest`): the same rules, holding only the
parameters that API's spec lists (openapi-spec/swap/v2/swap.yaml,
openapi-spec/ultra/ultra.yaml), so nothing else is ever sent to it.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, StrictInt, model_validator

from jupcron.plans.fields import U64_MAX, Amount, Mint, Pubkey, _at_least, _Model, dumped
from jupcron.products.findings import Finding
from jupcron.products.spec import CheckContext, RequestSpec

WALLET_FIELD = "taker"
SWAP_V2 = "swap-v2"
ULTRA_V1 = "ultra-v1"
ROUTERS = ("metis", "jupiterz", "dflow", "okx")
ULTRA_V1_NOTICE = (
    "swap_api: ultra-v1 is no longer actively maintained by Jupiter; Swap V2 serves the same "
    "request: remove swap_api (or set swap-v2) to move this plan (docs/products.md)"
)


def _routers(value: str) -> str:
    names = [n.strip() for n in value.split(",")]
    bad = [n for n in names if n not in ROUTERS]
    if bad:
        raise ValueError(f"unknown router '{bad[0]}' (known: {', '.join(ROUTERS)})")
    return ",".join(names)


class SwapRequest(_Model):
    """GET /swap/v2/order or /ultra/v1/order query, minus ``taker``: the parameters
    either spec lists. Each API is sent only its own (`jupcron.products.swap.steps.query`;
    `checks` says which of a plan's parameters its API would not be sent)."""

    input_mint: Mint = Field(alias="inputMint")
    output_mint: Mint = Field(alias="outputMint")
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


def _wire_names(model: type[_Model]) -> frozenset[str]:
    return frozenset(f.alias or name for name, f in model.model_fields.items())


ALL_PARAMS = _wire_names(SwapRequest)
SWAP_V2_ONLY = frozenset(
    {"swapMode", "slippageBps", "broadcastFeeType", "priorityFeeLamports", "jitoTipLamports"}
)
ULTRA_ONLY = frozenset({"closeAuthority"})


class _ApiQuery(SwapRequest):
    """`SwapRequest` as one API takes it: a parameter its spec does not list is refused."""

    api: ClassVar[str]
    params: ClassVar[frozenset[str]]

    @model_validator(mode="before")
    @classmethod
    def _listed(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key in ALL_PARAMS and key not in cls.params:
                    raise ValueError(f"{key} is not a parameter of {cls.api}'s /order")
        return data


class SwapV2OrderRequest(_ApiQuery):
    """GET /swap/v2/order (openapi-spec/swap/v2/swap.yaml)."""

    api: ClassVar[str] = SWAP_V2
    params: ClassVar[frozenset[str]] = ALL_PARAMS - ULTRA_ONLY


class UltraOrderRequest(_ApiQuery):
    """GET /ultra/v1/order (openapi-spec/ultra/ultra.yaml): Swap V2's slippage, fee
    and ``swapMode`` parameters are not Ultra's; ``closeAuthority`` is Ultra's only."""

    api: ClassVar[str] = ULTRA_V1
    params: ClassVar[frozenset[str]] = ALL_PARAMS - SWAP_V2_ONLY


def checks(request: SwapRequest, context: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    if context.swap_api == ULTRA_V1:
        out.append(Finding(("swap_api",), ULTRA_V1_NOTICE, warning=True))
    out.extend(param_checks(request, context.swap_api))
    out.extend(referral_pair(request))
    if request.input_mint == request.output_mint:
        out.append(Finding(("request", "outputMint"), "outputMint is the same as inputMint"))
    return out


def referral_pair(request: SwapRequest) -> list[Finding]:
    """``referralAccount`` and ``referralFee`` go together (Swap V2's spec: each "must be
    used together with" the other; Ultra's fee guide passes both): one alone is said when
    the plan is loaded (a warning: what Jupiter does with it, refuse the order or drop the
    referral, is not documented; the plan's guard terms hold either way)."""
    if (request.referral_account is None) == (request.referral_fee is None):
        return []
    given, missing = (
        ("referralAccount", "referralFee") if request.referral_fee is None
        else ("referralFee", "referralAccount")
    )  # fmt: skip
    message = f"{given} without {missing}: the API takes them together (or neither)"
    return [Finding(("request", missing), message, warning=True)]


def param_checks(request: SwapRequest, swap_api: str | None) -> list[Finding]:
    """Parameters the plan's swap API does not list are never sent to it: an error
    when the plan names its API (when the daemon config decides, a run records what
    it left out, ``not_sent`` in its ``ordered`` event)."""
    given = dumped(request)  # (shared: only read)
    out: list[Finding] = []
    if "closeAuthority" in given and "payer" not in given:
        message = "closeAuthority requires payer (Ultra ignores it without one)"
        out.append(Finding(("request", "closeAuthority"), message))
    for api, listed in ((SWAP_V2, SwapV2OrderRequest.params), (ULTRA_V1, UltraOrderRequest.params)):
        other = ULTRA_V1 if api == SWAP_V2 else SWAP_V2
        for key in sorted(k for k in given if k not in listed):
            if swap_api == api:
                message = f"{key} is not a parameter of {api}'s /order (only {other}'s)"
                out.append(Finding(("request", key), message))
    return out


SPEC = RequestSpec(
    model=SwapRequest, wallet_field=WALLET_FIELD, checks=checks,
    pair=lambda r: (r.input_mint, r.output_mint),
    spend=lambda r: (r.input_mint, r.amount, ("amount",)), priced=True, swap_api=True,
)  # fmt: skip
