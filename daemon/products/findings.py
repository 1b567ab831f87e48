"""What the cross-field rules of a plan find (one type for every kind), and the
stablecoin arithmetic they share."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Finding:
    """A rule broken across fields: where (relative to the plan) and what."""

    loc: tuple[str | int, ...]
    message: str
    warning: bool = False


def usd(amount: int | Decimal, decimals: int) -> Decimal:
    """`amount` base units of a stablecoin with `decimals`, in whole cents."""
    return (Decimal(amount) / (Decimal(10) ** decimals)).quantize(Decimal("0.01"))
