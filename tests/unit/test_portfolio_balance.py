"""A wallet's balance of one mint, read from a typed portfolio answer (the adapter's
job, so the runner's balance check gets an integer of base units); an answer whose
assets or token facts are garbled is refused when it is parsed, never met later as a
foreign exception in the balance check."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from jupcron.api.portfolio import Portfolio

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
        (  # staked SOL labelled Wallet (as the spec's own example has it) is no balance
            portfolio(
                wallet({"address": SOL, "amount": 1}),
                {**wallet({"address": SOL, "amount": 10}), "platformId": "native-stake"},
            ),
            SOL,
            1_000_000_000,
        ),
        (portfolio(wallet({"address": USDC, "rawAmount": None, "amount": 4})), USDC, 4_000_000),
        (portfolio(wallet({"address": USDC, "amount": None})), USDC, 0),
        (
            portfolio(wallet({"address": USDC, "amount": 1}), token_info={"solana": None}),
            USDC,
            1_000_000,
        ),
        (portfolio(wallet({"address": SOL, "amount": 1})), USDC, 0),  # none of that mint
        (portfolio(), USDC, 0),
    ],
)
def test_balance_of_a_mint(answer: Portfolio, mint: str, expected: int) -> None:
    assert answer.balance_of(mint) == expected


@pytest.mark.parametrize(
    ("answer", "where"),
    [
        ({"elements": [wallet({"address": USDC, "rawAmount": "abc"})]}, "rawAmount"),
        ({"elements": [wallet({"address": USDC, "rawAmount": "1.5"})]}, "rawAmount"),
        ({"elements": [wallet({"address": USDC, "rawAmount": -1})]}, "rawAmount"),
        ({"elements": [wallet({"address": USDC, "amount": "not a number"})]}, "amount"),
        ({"elements": [wallet({"address": USDC, "amount": "NaN"})]}, "amount"),
        ({"elements": [wallet({"address": USDC, "amount": -2})]}, "amount"),
        ({"elements": [wallet({"address": 7, "amount": 1})]}, "address"),
        ({"elements": [{"label": "Wallet", "data": {"assets": {"a": 1}}}]}, "assets"),
        ({"elements": [{"label": "Wallet", "data": {"assets": ["x"]}}]}, "assets.0"),
        ({"tokenInfo": {"solana": []}}, "tokenInfo.solana"),
        ({"tokenInfo": {"solana": {USDC: None}}}, f"tokenInfo.solana.{USDC}"),
        ({"tokenInfo": {"solana": {USDC: {"decimals": "six"}}}}, "decimals"),
        ({"tokenInfo": {"solana": {USDC: {"decimals": 300}}}}, "decimals"),
        ({"tokenInfo": {"solana": {USDC: {"symbol": ["USDC"]}}}}, "symbol"),
    ],
)  # fmt: skip
def test_a_garbled_asset_or_token_fact_is_refused_when_parsed(
    answer: dict[str, Any], where: str
) -> None:
    """Before: the answer parsed, then `balance_of` / `symbol` raised ValueError,
    TypeError or AttributeError inside the runner's balance check."""
    with pytest.raises(ValidationError) as caught:
        Portfolio.model_validate(answer)
    locs = [".".join(str(p) for p in e["loc"]) for e in caught.value.errors()]
    assert any(where in loc for loc in locs), locs


def test_a_balance_in_ui_units_of_a_mint_of_unknown_decimals_is_not_exact() -> None:
    """The balance check and the runway watch take no guessed decimals (6 would read a
    5-decimal mint ten times too high): no exact balance then."""
    ui_only = portfolio(wallet({"address": BONK, "amount": 1}))
    assert ui_only.guessed(BONK)
    assert ui_only.exact_balance(BONK) is None
    told = portfolio(
        wallet({"address": BONK, "amount": 1}), token_info={"solana": {BONK: {"decimals": 5}}}
    )
    assert told.exact_balance(BONK) == 100_000
    raw = portfolio(wallet({"address": BONK, "rawAmount": "7"}))
    assert raw.exact_balance(BONK) == 7
    assert portfolio().exact_balance(BONK) == 0  # none held: exactly nothing


def test_decimals_are_known_only_where_the_answer_gives_them() -> None:
    """The runway watch stores and shows a mint's decimals from the answer: a guessed 6
    would be kept as known, and a balance read in base units shown at that scale."""
    said = portfolio(token_info={"solana": {BONK: {"decimals": 5}}})
    assert said.known_decimals(BONK) == 5
    assert portfolio().known_decimals(BONK) is None
    assert portfolio().decimals_of(BONK) == 6  # (the balance's own fallback, never stored)
    assert portfolio().known_decimals(SOL) == 9
