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
    ValidationInfo,
    field_validator,
)

from jupcron.urls import check_http_url, mask_url

# the most a config's seconds (or requests a second) may be: ten years, as a plan's
# durations. YAML reads ``.inf`` and ``1e400`` as an infinite float, and ``1e20`` is a
# float too: each passed a ``> 0`` check, then overflowed where it is used (a run's
# expiry `timedelta`, a thread's `Event.wait`, a socket's timeout: OverflowError)
LONGEST = 10 * 366 * 86_400
PositiveFloat = Annotated[float, Field(gt=0, le=LONGEST)]
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
