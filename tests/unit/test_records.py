"""Plan records as the daemon keeps them: equal to what was stored, strings shared."""

from __future__ import annotations

import json

from jupcron.store.records import compact

MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"


def test_compact_keeps_the_value_and_shares_keys_and_short_strings() -> None:
    text = json.dumps(
        {"inputMint": MINT, "amount": 1, "params": {"time": [MINT, "x" * 100, None, 2.5]}}
    )
    first, second = compact(json.loads(text)), compact(json.loads(text))
    assert first == second == json.loads(text)
    assert first["inputMint"] is second["inputMint"]  # one string for every plan
    assert next(iter(first)) is next(iter(second))  # keys too
    assert first["params"]["time"][0] is second["params"]["time"][0]
    assert first["params"]["time"][1] is not second["params"]["time"][1]  # long: left alone
