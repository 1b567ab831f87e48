"""Recurring (time-based) orders: the ``POST /recurring/v1/createOrder`` body, minus
``user`` — the one model of it, for plans and the API client alike — and its rules.

Jupiter's spec (openapi-spec/recurring/recurring.yaml) gives ``interval`` in
seconds with no bound; jupcron holds it to at least 60 s, and every amount to
more than 0 (an order of nothing is refused by the program anyway).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import Field, StrictInt, model_validator

from jupcron.mints import STABLECOINS
from jupcron.plans.fields import U64_MAX, Amount, Mint, Price, _at_least, _Model
from jupcron.products.findings import Finding, usd
from jupcron.products.spec import CheckContext, RequestSpec, Spent

RECURRING_MIN_TOTAL_USD = 100
RECURRING_MIN_PER_ORDER_USD = 50
RECURRING_V1_UNMAINTAINED = (
    "Recurring v1 is no longer actively maintained by Jupiter (superseded by DCA under "
    "Trigger V2): consider kind: trigger-v2-dca (see docs/products.md, 'Moving a v1 plan "
    "to V2'); this plan keeps working as it is"
)
WALLET_FIELD = "user"

Seconds = Annotated[StrictInt, _at_least(60, 10 * 366 * 86400, " seconds")]
StartAt = Annotated[StrictInt, Field(gt=0, le=U64_MAX)]


class TimeParams(_Model):
    in_amount: Amount = Field(alias="inAmount")
    number_of_orders: Annotated[StrictInt, _at_least(2, 1_000_000)] = Field(alias="numberOfOrders")
    interval: Seconds
    min_price: Price | None = Field(default=None, alias="minPrice")
    max_price: Price | None = Field(default=None, alias="maxPrice")
    start_at: StartAt | None = Field(default=None, alias="startAt")


class PriceParams(_Model):
    """Deprecated by Jupiter (price-based recurring orders); accepted with a warning."""

    deposit_amount: Amount = Field(alias="depositAmount")
    increment_usdc_value: Amount = Field(alias="incrementUsdcValue")
    interval: Seconds
    start_at: StartAt | None = Field(default=None, alias="startAt")


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

    input_mint: Mint = Field(alias="inputMint")
    output_mint: Mint = Field(alias="outputMint")
    params: RecurringParams


def spend(request: RecurringRequest) -> Spent | None:
    time, price = request.params.time, request.params.price
    if time is not None:
        return request.input_mint, time.in_amount, ("params", "time", "inAmount")
    if price is not None:
        return request.input_mint, price.deposit_amount, ("params", "price", "depositAmount")
    return None


def checks(request: RecurringRequest, context: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    if request.input_mint == request.output_mint:
        out.append(Finding(("request", "outputMint"), "outputMint is the same as inputMint"))
    time, price = request.params.time, request.params.price
    # the DCA's per-cycle least output (min_out_amount) answers a max price, its most
    # output a min price (Jupiter's DCA SDK): minPrice alone gives limits nothing to hold
    unfloored = time is not None and time.max_price is None
    if context.limits is not None and unfloored:
        out.append(
            Finding(
                ("limits",),
                "a recurring order carries a per-cycle minimum out "
                "only when params.time sets maxPrice (minPrice bounds the most out); "
                "txguard holds that minimum to these limits, so without one its runs "
                "are refused (docs/price-protection.md)",
                warning=True,
            )
        )
    if price is not None:
        out.append(
            Finding(
                ("request", "params", "price"),
                "params.price (price-based "
                "recurring) is deprecated by Jupiter; use params.time (its runs "
                "will be rejected: the Value Average program's interface is not "
                "public, so txguard cannot check what it is told)",
                warning=True,
            )
        )
    if time is not None:
        low, high = time.min_price, time.max_price
        if low is not None and high is not None and low > high:
            out.append(
                Finding(("request", "params", "time", "minPrice"), "minPrice is above maxPrice")
            )
    return out + _minimums(request)


def _minimums(request: RecurringRequest) -> list[Finding]:
    """The API's USD minimums, where the input is a stablecoin (offline)."""
    stable = STABLECOINS.get(request.input_mint)
    if stable is None:
        return []
    symbol, decimals = stable
    out: list[Finding] = []
    time, price = request.params.time, request.params.price
    if time is not None:
        total = usd(time.in_amount, decimals)
        where = ("request", "params", "time", "inAmount")
        if total < RECURRING_MIN_TOTAL_USD:
            out.append(
                Finding(
                    where,
                    f"inAmount is {total} {symbol}; a recurring order needs "
                    f"at least {RECURRING_MIN_TOTAL_USD} {symbol} in total",
                )
            )
        per_order = usd(Decimal(time.in_amount) / time.number_of_orders, decimals)
        if per_order < RECURRING_MIN_PER_ORDER_USD:
            out.append(
                Finding(
                    where,
                    f"each order would be {per_order} {symbol} (inAmount / "
                    f"numberOfOrders); the minimum is {RECURRING_MIN_PER_ORDER_USD} "
                    f"{symbol} per order",
                )
            )
    if price is not None:
        total = usd(price.deposit_amount, decimals)
        if total < RECURRING_MIN_TOTAL_USD:
            out.append(
                Finding(
                    ("request", "params", "price", "depositAmount"),
                    f"depositAmount is {total} {symbol}; a recurring order needs at "
                    f"least {RECURRING_MIN_TOTAL_USD} {symbol} in total",
                )
            )
    return out


SPEC = RequestSpec(
    model=RecurringRequest, wallet_field=WALLET_FIELD, checks=checks,
    pair=lambda r: (r.input_mint, r.output_mint), spend=spend,
    priced=True, suggestion=RECURRING_V1_UNMAINTAINED,
)  # fmt: skip
