"""`jupcron audit` speaks in tokens: each run's amounts in its mints' own decimals,
with symbols, beside the base units; a mint whose decimals are unknown says so."""

from __future__ import annotations

import pytest

from jupcron.cli.audit import with_units
from jupcron.store import tokens

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
WBTC = "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh"
KNOWN = {**tokens.builtin(), WBTC: tokens.Token(WBTC, 8, "WBTC", "api")}


@pytest.mark.parametrize(
    ("mint", "amount", "shown", "ui"),
    [
        (USDC, "5000000", "5 USDC", "5"),  # 6 decimals
        (WBTC, "12345678", "0.12345678 WBTC", "0.12345678"),  # 8 decimals
        (SOL, "33300000", "0.0333 SOL", "0.0333"),  # 9 decimals
    ],
)
def test_amounts_in_each_mints_own_decimals(mint: str, amount: str, shown: str, ui: str) -> None:
    row = with_units({"input_mint": mint, "in_amount": amount, "output_mint": None,
                      "out_amount": None}, KNOWN)  # fmt: skip
    assert (row["in"], row["in_amount_ui"], row["in_amount"]) == (shown, ui, amount)
    assert row["input_symbol"] == KNOWN[mint].label
    assert (row["out"], row["out_amount_ui"], row["output_symbol"]) == (None, None, None)


def test_a_mint_whose_decimals_are_unknown_keeps_its_base_units_and_says_so() -> None:
    stranger = "9yXwWmT3rAEdGBVLbD4pgxQTcDx4mQ3BFx2XoeqF1tmZ"
    row = with_units({"input_mint": USDC, "in_amount": "1", "output_mint": stranger,
                      "out_amount": "42"}, KNOWN)  # fmt: skip
    assert row["out"] == "42 (base units)"
    assert (row["out_amount_ui"], row["output_symbol"]) == (None, None)
    assert row["in"] == "0.000001 USDC"
