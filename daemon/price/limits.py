"""A plan's price limits (``limits:``) and the least output they allow.

The YAML shape (docs/price-protection.md)::

    limits:
      min_out: 1500000000      # base units of the output mint, for the whole run
      max_price: 250           # quote per unit of the other mint: pay at most this
      min_price: 180           # quote per unit of the other mint: sell for at least this
      quote: USDC              # the mint prices are counted in: a symbol or an address

``quote`` must be one of the plan's two mints. Buying (``quote`` is the input
mint) takes ``max_price``; selling (``quote`` is the output mint) takes
``min_price``; the other way round would cap what the run receives, which is no
protection, and is refused by `plans validate` (`pair_problems`).

`minimum_out` turns them into one number: the least output, in base units of
the output mint, a run spending ``in_amount`` may accept; exact (`Fraction`),
rounded up, so a limit is never loosened by rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Annotated

from pydantic import AfterValidator, model_validator

from jupcron.mints import KNOWN_MINTS, SYMBOLS
from jupcron.plans.fields import Amount, Price, _Model, _pubkey


def _quote(value: object) -> str:
    """A known symbol (any case) or a mint address; kept as written (the stored
    plan's hash does not depend on the form), resolved by `quote_mint`."""
    if isinstance(value, str) and value.upper() in SYMBOLS:
        return value
    try:
        return _pubkey(value)
    except ValueError:
        known = ", ".join(sorted(s for s, _ in KNOWN_MINTS.values()))
        raise ValueError(
            f"'{value}' is neither a known symbol ({known}) nor a mint address"
        ) from None


Quote = Annotated[str, AfterValidator(_quote)]


class PriceLimits(_Model):
    """A plan's ``limits:`` as written (stored in its settings, only when set)."""

    min_out: Amount | None = None
    max_price: Price | None = None
    min_price: Price | None = None
    quote: Quote | None = None

    @model_validator(mode="after")
    def _whole(self) -> PriceLimits:
        prices = self.max_price is not None or self.min_price is not None
        if self.min_out is None and not prices:
            raise ValueError("give min_out, or max_price / min_price with quote")
        if prices and self.quote is None:
            raise ValueError("max_price / min_price need 'quote': the mint prices are counted in")
        if self.quote is not None and not prices:
            raise ValueError("'quote' without max_price or min_price")
        if self.max_price is not None and self.min_price is not None:
            raise ValueError(
                "give max_price (buying: quote is the input mint) or min_price (selling: "
                "quote is the output mint), not both"
            )
        return self

    def stored(self) -> dict[str, int | str]:
        """The JSON form kept in the plan's settings: the keys given, prices as decimal
        text (written by hand: pydantic's JSON dump of a validated `Decimal` warns)."""
        out: dict[str, int | str] = {}
        if self.min_out is not None:
            out["min_out"] = self.min_out
        for key, price in (("max_price", self.max_price), ("min_price", self.min_price)):
            if price is not None:
                out[key] = str(price)
        if self.quote is not None:
            out["quote"] = self.quote
        return out

    @property
    def has_price(self) -> bool:
        return self.max_price is not None or self.min_price is not None


def quote_mint(quote: str) -> str:
    """The mint address a ``quote`` names."""
    return SYMBOLS.get(quote.upper(), quote)


def pair_problems(limits: PriceLimits, input_mint: str, output_mint: str) -> list[tuple[str, str]]:
    """(key, message) for limits that do not fit the plan's pair."""
    if not limits.has_price or limits.quote is None:
        return []
    quote = quote_mint(limits.quote)
    if quote not in (input_mint, output_mint):
        return [("quote", f"quote {limits.quote} is neither the plan's inputMint nor outputMint")]
    if quote == input_mint and limits.min_price is not None:
        return [("min_price", BUY_FLOOR)]
    if quote == output_mint and limits.max_price is not None:
        return [("max_price", SELL_CEILING)]
    return []


BUY_FLOOR = (
    "buying with the quote mint: a floor on the price caps what the run receives, "
    "which protects nothing; give max_price (pay at most)"
)
SELL_CEILING = (
    "selling for the quote mint: a ceiling on the price caps what the run receives, "
    "which protects nothing; give min_price (sell for at least)"
)


class UnknownDecimals(ValueError):
    """A price limit cannot be turned into base units: a mint's decimals are unknown."""


def decimals_of(mint: str, read: Callable[[str], int | None] | None = None) -> int | None:
    """A mint's decimals: from `KNOWN_MINTS`, else from `read` (the chain), else None."""
    known = KNOWN_MINTS.get(mint)
    if known is not None:
        return known[1]
    return None if read is None else read(mint)


def _ceil(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


def minimum_out(
    limits: PriceLimits,
    input_mint: str,
    output_mint: str,
    in_amount: int,
    in_decimals: int | None,
    out_decimals: int | None,
) -> int | None:
    """The least output (base units of `output_mint`) the limits allow for `in_amount`
    base units of `input_mint`; None when the limits set none. Raises `UnknownDecimals`
    when a price form needs a decimals value that is None, ValueError when the limits
    do not fit the pair (`pair_problems`)."""
    floors: list[int] = []
    if limits.min_out is not None:
        floors.append(limits.min_out)
    if limits.has_price and limits.quote is not None:
        problems = pair_problems(limits, input_mint, output_mint)
        if problems:
            raise ValueError(problems[0][1])
        if in_decimals is None or out_decimals is None:
            missing = input_mint if in_decimals is None else output_mint
            raise UnknownDecimals(f"decimals of {missing} are unknown")
        scale = Fraction(10) ** (out_decimals - in_decimals)  # base units out per in, at price 1
        if limits.max_price is not None:  # buying: in/out <= max_price (token units)
            floors.append(_ceil(Fraction(in_amount) * scale / Fraction(limits.max_price)))
        elif limits.min_price is not None:  # selling: out/in >= min_price (token units)
            floors.append(_ceil(Fraction(in_amount) * scale * Fraction(limits.min_price)))
    return max(floors) if floors else None


@dataclass(frozen=True)
class LimitCheck:
    """A quote against the plan's least output."""

    min_out: int
    quoted_out: int

    @property
    def ok(self) -> bool:
        return self.quoted_out >= self.min_out

    def reason(self) -> str:
        return (
            f"quote beyond the plan's price limit: {self.quoted_out} out is below the "
            f"least the plan accepts, {self.min_out} (limits)"
        )


def as_decimal(value: Fraction, digits: int = 12) -> Decimal:
    """A fraction as a Decimal with `digits` significant digits (for showing)."""
    with localcontext() as ctx:
        ctx.prec = digits
        return Decimal(value.numerator) / Decimal(value.denominator)
