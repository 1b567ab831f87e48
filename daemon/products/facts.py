"""Reading a run's ``ordered`` event back (its facts as recorded), for the guard; and
checking facts given by hand (`jupcron tx inspect --ordered`), whose readers here
take a value of the wrong shape for "not said", which would silently drop its check."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jupcron.visible import clipped

# the price facts every recorded ``price`` object carries (`Protection.detail`; null
# when the run had none), read by `price_facts`
PRICE_FACTS = ("min_out", "reference_out", "max_price_deviation_bps")
# the other facts the guard reads (`expectation` of each product), by the shape each has
INT_FACTS = ("fee_bps", "slippage_bps", "out_amount")
TEXT_FACTS = ("vault", "order", "input_mint", "output_mint", "router", "swap_type")


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


def ordered_problems(ordered: Mapping[str, Any]) -> list[str]:
    """What is malformed in `ordered` facts (named as the run's ``ordered`` event names
    them): each fact the guard reads must have the shape the runner records, or be
    null (``price``: an object, or absent); facts it does not read pass as they are."""
    problems = [f"{key}: {why}" for key in INT_FACTS if (why := _int_problem(ordered, key))]
    for key in TEXT_FACTS:
        if ordered.get(key) is not None and not isinstance(ordered[key], str):
            problems.append(f"{key}: must be a string or null, got {_shown(ordered[key])}")
    if ordered.get("gasless") is not None and not isinstance(ordered["gasless"], bool):
        problems.append(f"gasless: must be true, false or null, got {_shown(ordered['gasless'])}")
    deposit = ordered.get("deposit")
    if deposit is not None and not (isinstance(deposit, list) and len(deposit) == 3):
        problems.append(f"deposit: must be a list of 3 or null, got {_shown(deposit)}")
    if "price" not in ordered:  # the run had no price protection, or it is worked out now
        return problems
    price = ordered["price"]
    if not isinstance(price, Mapping):  # null too: a run records an object, or nothing
        shape = "{" + ", ".join(PRICE_FACTS) + "}"
        why = f"must be an object {shape} as a run's 'ordered' event records it"
        return [*problems, f"price: {why}, got {_shown(price)}"]
    missing = [key for key in PRICE_FACTS if key not in price]
    if missing:
        problems.append(f"price: {', '.join(missing)} missing (null: none)")
    problems += [f"price.{key}: {why}" for key in PRICE_FACTS if (why := _int_problem(price, key))]
    for key in ("problem", "warning"):
        if price.get(key) is not None and not isinstance(price[key], str):
            problems.append(f"price.{key}: must be a string or null, got {_shown(price[key])}")
    return problems


def _int_problem(facts: Mapping[str, Any], key: str) -> str | None:
    value = facts.get(key)
    if value is None:
        return None
    number = fact_int(value)
    if number is None or number < 0:
        return f"must be a whole number (or its digits) or null, got {_shown(value)}"
    return None


def _shown(value: Any) -> str:
    return clipped(json.dumps(value), 40)
