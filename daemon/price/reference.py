"""The reference output of a trade, from the oracle's USD prices, and the check
against it.

    reference_out = in_amount / 10^in_decimals * usd(input) / usd(output) * 10^out_decimals

rounded down. A transaction's guaranteed minimum out may be below it by at most
``guard.max_price_deviation_bps``: the route's fees and slippage fit inside that
band, a quote far below the market does not (the guard holds the signed transaction's
minimum to it: `jupcron.txguard.orders`).

A pair is *covered* when both mints have a feed (`feeds_of`: the built-in ones
and ``price.feeds``); an uncovered pair has no reference (None), which is not a
problem in itself (`plans validate` warns about a plan with neither a limit nor
a reference). A covered pair whose feed is stale, missing or unreadable gives a
`Reference` with its ``problem``; what follows is ``price.on_stale``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from jupcron.config import Config
from jupcron.price.limits import as_decimal
from jupcron.price.oracle import DEFAULT_FEEDS, AccountReader, Feed, read_prices

BPS = 10_000


def feeds_of(config: Config) -> dict[str, Feed]:
    """The built-in feeds, with ``price.feeds`` added or replacing them (a configured
    account that is a built-in one keeps its feed id check)."""
    feeds = dict(DEFAULT_FEEDS)
    known = {feed.account: feed for feed in DEFAULT_FEEDS.values()}
    for mint, account in config.price.feeds.items():
        feeds[mint] = known.get(account, Feed(account))
    return feeds


@dataclass(frozen=True)
class Reference:
    """What the oracle says a trade of `in_amount` should give, or why it cannot say."""

    input_mint: str
    output_mint: str
    in_amount: int
    out_amount: int | None = None
    input_usd: Decimal | None = None
    output_usd: Decimal | None = None
    price: Decimal | None = None  # output per input, token units
    publish_time: int | None = None  # the older of the two feeds'
    problem: str | None = None

    def detail(self) -> dict[str, Any]:
        """For the run's events (amounts as strings, prices as decimal text)."""

        def text(value: object) -> str | None:
            return None if value is None else str(value)

        return {
            "source": "pyth", "in_amount": str(self.in_amount),
            "reference_out": text(self.out_amount),
            "reference_price": text(self.price), "input_usd": text(self.input_usd),
            "output_usd": text(self.output_usd), "publish_time": self.publish_time,
            "problem": self.problem,
        }  # fmt: skip


def reference_out(
    in_amount: int, input_usd: Decimal, output_usd: Decimal, in_decimals: int, out_decimals: int
) -> int:
    """Output base units worth `in_amount` input base units at these USD prices (floor)."""
    value = (
        Fraction(in_amount)
        * Fraction(input_usd)
        / Fraction(output_usd)
        * Fraction(10) ** (out_decimals - in_decimals)
    )
    return value.numerator // value.denominator


def reference_for(
    rpc: AccountReader,
    feeds: Mapping[str, Feed],
    input_mint: str,
    output_mint: str,
    in_amount: int,
    decimals: tuple[int | None, int | None],
    *,
    now: float,
    max_age: float,
) -> Reference | None:
    """The reference for this trade (None when the pair is not covered); `now` in unix
    seconds. RPC errors propagate (the caller decides what they mean)."""
    if input_mint not in feeds or output_mint not in feeds:
        return None
    readings = read_prices(rpc, feeds, [input_mint, output_mint], now=now, max_age=max_age)
    problems = [r.problem for r in readings.values() if r.problem is not None]
    if problems:
        return Reference(input_mint, output_mint, in_amount, problem="; ".join(problems))
    in_usd, out_usd = readings[input_mint].usd, readings[output_mint].usd
    in_dec, out_dec = decimals
    if in_usd is None or out_usd is None:  # judged fine, so never; kept for the type
        return Reference(input_mint, output_mint, in_amount, problem="no price")
    if in_dec is None or out_dec is None:
        missing = input_mint if in_dec is None else output_mint
        return Reference(
            input_mint, output_mint, in_amount, input_usd=in_usd, output_usd=out_usd,
            problem=f"decimals of {missing} are unknown",
        )  # fmt: skip
    times = [r.price.publish_time for r in readings.values() if r.price is not None]
    return Reference(
        input_mint, output_mint, in_amount,
        out_amount=reference_out(in_amount, in_usd, out_usd, in_dec, out_dec),
        input_usd=in_usd, output_usd=out_usd,
        price=as_decimal(Fraction(in_usd) / Fraction(out_usd)),
        publish_time=min(times) if times else None,
    )  # fmt: skip


def vs_reference_bps(actual_out: int, reference_out: int) -> Decimal:
    """How much better (positive) or worse (negative) than the reference, in bps
    (two decimals)."""
    if reference_out <= 0:
        raise ValueError("reference_out must be positive")
    value = Fraction(actual_out - reference_out, reference_out) * BPS
    return as_decimal(value).quantize(Decimal("0.01"))
