"""Reading a run's ``ordered`` event back (its facts as recorded), for the guard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def fact_int(value: Any) -> int | None:
    """An integer fact (an integer, or a string of digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def price_facts(ordered: Mapping[str, Any]) -> dict[str, Any]:
    """The run's price protection as its ``ordered`` event recorded it
    (`runner.pricecheck`): the least output, the reference, and any problem."""
    price = ordered.get("price")
    if not isinstance(price, Mapping):
        return {}
    problem = price.get("problem")
    return {
        "min_out": fact_int(price.get("min_out")),
        "reference_out": fact_int(price.get("reference_out")),
        "max_deviation_bps": fact_int(price.get("max_price_deviation_bps")),
        "price_problem": problem if isinstance(problem, str) else None,
    }
