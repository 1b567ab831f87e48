"""What the config's sections are built from: the frozen section base that masks
URL fields in its repr, the masked URL types, and the validator of a URL field
that follows an ``allow_insecure_http`` field."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationInfo,
    field_validator,
)

from jupcron.plans.fields import _pubkey
from jupcron.price.limits import KNOWN_MINTS, SYMBOLS
from jupcron.urls import check_http_url, mask_url

PositiveFloat = Annotated[float, Field(gt=0)]
# how many characters a key may differ from a well-known mint's address and still be
# taken for a mistyped copy of it (a real mint that close is not going to happen)
NEAR_MISS = 2
# the APIs that can serve `kind: swap` (docs/products.md)
SwapApi = Literal["swap-v2", "ultra-v1"]


def _shown(value: str | None) -> str | None:
    return None if value is None else mask_url(value)


class _Masked:
    """Marks a field whose value is shown through `mask_url` (repr, str, dumps)."""


MASKED = _Masked()
MaskedUrl = Annotated[str, PlainSerializer(_shown), MASKED]
OptionalMaskedUrl = Annotated[str | None, PlainSerializer(_shown), MASKED]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        fields = type(self).model_fields
        for name, value in super().__repr_args__():
            info = fields.get(name) if name else None
            if info is not None and MASKED in info.metadata and isinstance(value, str):
                value = mask_url(value)
            yield name, value


def http_url_validator(name: str, section: str, carries: str, *, strip: bool = False) -> Any:
    """The validator of the URL field `name`, which follows an ``allow_insecure_http``
    field (declared first, so its value is known here): ``None`` passes (an optional
    URL); `strip`: its trailing slashes dropped."""

    def check(cls: type[BaseModel], value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        allow = bool(info.data.get("allow_insecure_http", False))
        checked = check_http_url(value, section=section, carries=carries, allow_insecure=allow)
        return checked.rstrip("/") if strip else checked

    return field_validator(name)(classmethod(check))


def mint_address(value: object) -> str:
    """A mint's address, checked as a plan's mints are (a base58 public key); a
    well-known symbol (``USDC``) or a near miss of a well-known mint's address (a
    truncated or mistyped copy) is refused with the address meant: a mint is matched
    exactly, so either would make its setting silently never apply."""
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


MintAddress = Annotated[str, PlainValidator(mint_address)]


def _differ_by_at_most(a: str, b: str, most: int) -> bool:
    """Whether `a` becomes `b` in at most `most` one-character edits (Levenshtein)."""
    if abs(len(a) - len(b)) > most:
        return False
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
        if min(row) > most:
            return False
    return row[-1] <= most
