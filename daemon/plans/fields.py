"""The value types plan requests are made of (public keys, base-unit amounts,
prices, bounded integers, durations), shared by every kind's request model."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer, PlainValidator
from solders.pubkey import Pubkey as _SoldersPubkey

from jupcron.mints import KNOWN_MINTS, SYMBOLS
from jupcron.scheduling.schedule import parse_duration
from jupcron.visible import clipped

_clip = partial(clipped, limit=60)

U64_MAX = 2**64 - 1
# how many characters a key may differ from a well-known mint's address and still be
# taken for a mistyped copy of it (a real mint that close is not going to happen)
NEAR_MISS = 2


def _pubkey(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a base58 public key (a string)")
    try:
        _SoldersPubkey.from_string(value)
    except ValueError:
        raise ValueError(f"'{_clip(value)}' is not a valid base58 public key") from None
    return value


def mint_address(value: object) -> str:
    """A mint's address: a base58 public key; a
    well-known symbol (``USDC``) or a near miss of a well-known mint's address (a
    truncated or mistyped copy) is refused with the address meant: a mint is matched
    exactly, so either would make its setting silently never apply. A text found
    valid once is not checked again (`_VALID_MINTS`)."""
    if type(value) is str:
        known = _VALID_MINTS.get(value)
        if known is not None:
            return known
    key = _mint_address(value)
    if type(value) is str and len(_VALID_MINTS) < VALID_MINTS_KEPT:
        _VALID_MINTS[key] = key
    return key


# the mints found valid, each checked once: a large apply's plans name the same few
# mints, and the near-miss check of each against every well-known mint was a third of
# reading a plan (the answer depends on the text alone)
_VALID_MINTS: dict[str, str] = {}
VALID_MINTS_KEPT = 10_000


def _mint_address(value: object) -> str:
    if isinstance(value, str) and value.upper() in SYMBOLS:
        mint = SYMBOLS[value.upper()]
        raise ValueError(
            f"'{value}' is a symbol, not a mint address (did you mean {value.upper()}'s "
            f"mint '{mint}'?)"
        )
    key = _pubkey(value)
    for mint, (symbol, _) in KNOWN_MINTS.items():
        if key != mint and _differ_by_at_most(key, mint, NEAR_MISS):
            raise ValueError(
                f"'{key}' is not {symbol}'s mint but a mistyped or truncated copy of it "
                f"(did you mean '{mint}'?)"
            )
    return key


def _differ_by_at_most(a: str, b: str, most: int) -> bool:
    """Whether `a` becomes `b` in at most `most` one-character edits (Levenshtein).
    First a cut that settles almost every pair at once (every plan's mints meet every
    well-known one): `most` edits touch at most `most` of `most` + 1 disjoint pieces of
    `b`, so one piece at least stands in `a` as it is."""
    if abs(len(a) - len(b)) > most:
        return False
    piece = len(b) // (most + 1)
    if piece and not any(b[n * piece : (n + 1) * piece] in a for n in range(most + 1)):
        return False
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
        if min(row) > most:
            return False
    return row[-1] <= most


def _amount(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be a whole number of base units, got {_clip(value)!r}")
    if value <= 0:
        raise ValueError("must be greater than 0")
    if value > U64_MAX:
        raise ValueError("is too large (must fit in 64 bits)")
    return value


# the prices a plan may state: no market needs more digits or a wider range (a price
# per unit of a 0-decimal token in a 1e-12 USD memecoin is 1e12), and each becomes an
# exact `Fraction` at run time, whose size follows the exponent: `1e-999999999` was a
# valid price, a billion-digit denominator that stalled the run's worker thread
PRICE_DIGITS = 40
PRICE_LEAST, PRICE_MOST = Decimal("1e-30"), Decimal("1e30")
PRICE_RANGE = f"at most {PRICE_DIGITS} digits, between 1e-30 and 1e30"


def _price(value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValueError("must be a number")
    try:
        price = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"'{_clip(value)}' is not a number") from None
    if not price.is_finite() or price <= 0:
        raise ValueError("must be a positive number")
    # compared, never computed with: exact whatever the exponent, and cheap
    if len(price.as_tuple().digits) > PRICE_DIGITS or not PRICE_LEAST <= price <= PRICE_MOST:
        raise ValueError(f"'{_clip(value)}' is out of range: a price has {PRICE_RANGE}")
    return price


Pubkey = Annotated[str, PlainValidator(_pubkey)]
Mint = Annotated[str, PlainValidator(mint_address)]  # a Pubkey, not a symbol nor a near miss
Amount = Annotated[int, PlainValidator(_amount)]
# stored as text (JSON has no decimal), sent to the API as an exact JSON number (jsonbody);
# the explicit serializer keeps pydantic from warning on its own Decimal-to-text step
Price = Annotated[
    Decimal, PlainValidator(_price), PlainSerializer(str, return_type=str, when_used="json")
]


def _at_least(low: int, high: int, unit: str = "") -> AfterValidator:
    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}{unit}")
        return value

    return AfterValidator(check)


def _duration_value(value: object) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("must be a duration like 90s, 15m, 6h or 1d")
    parse_duration(value)
    return value


Duration = Annotated[int | str, PlainValidator(_duration_value)]


def dumped(request: BaseModel) -> dict[str, Any]:
    """A request's JSON-ready body (by alias, without its unset parts), made once per
    request model, which plans share (`jupcron.plans.schema.Shared`): never change it.
    Held with the model, so the id it is found by is the model's while kept."""
    held = _DUMPS.get(id(request))
    if held is not None and held[0] is request:
        return held[1]
    body = request.model_dump(by_alias=True, exclude_none=True, mode="json")
    if len(_DUMPS) >= DUMPS_KEPT:
        _DUMPS.clear()
    _DUMPS[id(request)] = (request, body)
    return body


_DUMPS: dict[int, tuple[BaseModel, dict[str, Any]]] = {}
DUMPS_KEPT = 4096


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
