"""A wallet's balance of one mint, read from a typed portfolio answer (the adapter's
job, so the runner's balance check gets an integer of base units)."""

from __future__ import annotations

from typing import Any

import pytest

from jupcron.api.models import Portfolio

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
BONK = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263"


def wallet(*assets: dict[str, Any], label: str | None = "Wallet") -> dict[str, Any]:
    return {
        "type": "multiple",
        "platformId": "wallet-tokens",
        "label": label,
        "data": {"assets": [{"data": a} for a in assets]},
    }


def portfolio(*elements: dict[str, Any], token_info: dict[str, Any] | None = None) -> Portfolio:
    return Portfolio.model_validate(
        {"owner": SOL, "elements": list(elements), "tokenInfo": token_info or {}}
    )


@pytest.mark.parametrize(
    ("answer", "mint", "expected"),
    [
        (portfolio(wallet({"address": USDC, "rawAmount": "1234567"})), USDC, 1_234_567),
        (portfolio(wallet({"address": USDC, "amount": 2.5})), USDC, 2_500_000),  # 6 decimals
        (portfolio(wallet({"address": SOL, "amount": "0.25"})), SOL, 250_000_000),  # 9 for SOL
        (
            portfolio(
                wallet({"address": BONK, "amount": 3}),
                token_info={"solana": {BONK: {"decimals": 5}}},
            ),
            BONK,
            300_000,
        ),
        (  # two wallet elements add up; other platforms' positions do not count
            portfolio(
                wallet({"address": USDC, "amount": 1}),
                wallet({"address": USDC, "amount": 2}, label=None),
                wallet({"address": USDC, "amount": 50}, label="Lending"),
            ),
            USDC,
            3_000_000,
        ),
        (portfolio(wallet({"address": USDC, "amount": "not a number"})), USDC, 0),
        (portfolio(wallet({"address": SOL, "amount": 1})), USDC, 0),  # none of that mint
        (portfolio(), USDC, 0),
    ],
)
def test_balance_of_a_mint(answer: Portfolio, mint: str, expected: int) -> None:
    assert answer.balance_of(mint) == expected
