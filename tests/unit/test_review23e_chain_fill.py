"""The wallet's swap read from real ``getTransaction`` answers of Jupiter swaps
(tests/fixtures/rpc/, mainnet, with their source): what it gave and got, the fee and
the rent of token accounts kept out; and every answer that cannot tell
unambiguously measuring nothing, with its reason, never a guess."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from jupcron.chain.balances import SOL_MINT, parse_balances, wallet_swap
from jupcron.errors import ApiGarbageError

RPC = Path(__file__).resolve().parents[1] / "fixtures" / "rpc"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
JUP = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"
# the wallets of the two fixtures (each the fee payer: account 0)
USDC_JUP_WALLET = "DtMUkCoeyzs35B6EpQQxPyyog6TRwXxV1W1Acp8nWBNa"
SOL_USDC_WALLET = "3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c"


def _answer(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RPC / f"get-transaction-jupiter-{name}.json").read_text())
    return data


def test_a_token_for_token_swap_is_the_wallets_two_token_accounts() -> None:
    """1.1 USDC for 2.143812 JUP (the explorer's figures for 5LuTa5k9…): the wallet's
    USDC account 2928521 -> 1828521, its JUP account 2737385 -> 4881197; its lamports
    fell by the fee alone, which is no part of either side."""
    measured = wallet_swap(parse_balances(_answer("usdc-jup")), USDC_JUP_WALLET, USDC, JUP)
    assert (measured.in_amount, measured.out_amount, measured.reason) == (
        1_100_000,
        2_143_812,
        None,
    )


def test_sol_given_is_native_plus_wrapped_with_the_fee_and_the_rent_kept_out() -> None:
    """2X4vKsDS…: the wallet paid 1,000,000 lamports (991,250 into the pool through
    its wSOL account, 8,750 as a transfer) for 167,225 USDC base units. Its own
    lamports ROSE by 1,024,208: the wSOL account it held was closed into it (2,039,280
    rent back) and it paid the 15,072 fee. Counting the wallet's lamports alone would
    say it received SOL."""
    b = parse_balances(_answer("sol-usdc"))
    owner = b.account_keys.index(SOL_USDC_WALLET)
    assert b.post_lamports[owner] - b.pre_lamports[owner] == 1_024_208  # the trap
    measured = wallet_swap(b, SOL_USDC_WALLET, SOL_MINT, USDC)
    assert (measured.in_amount, measured.out_amount) == (1_000_000, 167_225)


def test_the_reverse_reading_is_not_a_swap_of_the_wallet() -> None:
    """Asked for the opposite direction, the changes are not a swap's: nothing."""
    measured = wallet_swap(parse_balances(_answer("usdc-jup")), USDC_JUP_WALLET, JUP, USDC)
    assert measured.in_amount is None
    assert "not a swap of the wallet" in (measured.reason or "")


def test_another_wallet_or_mint_is_not_in_the_transaction() -> None:
    b = parse_balances(_answer("usdc-jup"))
    stranger = "11111111111111111111111111111111"
    assert "no token account of the wallet" in (wallet_swap(b, stranger, USDC, JUP).reason or "")
    assert "not among" in (wallet_swap(b, stranger, SOL_MINT, JUP).reason or "")
    assert "no token account" in (wallet_swap(b, USDC_JUP_WALLET, USDC, SOL_MINT + "x").reason
                                  or "")  # fmt: skip


def test_two_token_accounts_of_the_wallet_for_one_mint_are_ambiguous() -> None:
    """A second USDC account of the wallet (here: the pool's, re-owned): which one the
    swap used is not for us to pick."""
    answer = _answer("usdc-jup")
    for side in ("preTokenBalances", "postTokenBalances"):
        for entry in answer["meta"][side]:
            if entry["accountIndex"] == 10:
                entry["owner"] = USDC_JUP_WALLET
    measured = wallet_swap(parse_balances(answer), USDC_JUP_WALLET, USDC, JUP)
    assert measured.in_amount is None
    assert "2 token accounts" in (measured.reason or "")


def _drop(path: tuple[str, ...]) -> Any:
    def mangle(answer: dict[str, Any]) -> None:
        target = answer
        for key in path[:-1]:
            target = target[key]
        target.pop(path[-1])

    return mangle


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def mangle(answer: dict[str, Any]) -> None:
        target = answer
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mangle


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (_drop(("meta", "postTokenBalances")), "postTokenBalances is missing"),
        (_drop(("meta", "preBalances")), "preBalances is missing"),
        (_drop(("meta", "loadedAddresses")), "do not match the account keys"),
        (_set(("meta", "fee"), "lots"), "is not an integer"),
        (_set(("meta", "preBalances", 0), -1), "is negative"),
        (_set(("meta", "preTokenBalances", 0, "accountIndex"), 99), "names no account"),
        (_set(("meta", "preTokenBalances", 0, "uiTokenAmount"), {"uiAmount": 2.9}),
         "is incomplete"),
        (_set(("meta", "postTokenBalances", 1, "uiTokenAmount", "amount"), 4.881197),
         "is not an integer"),
        (_set(("transaction", "message"), None), "accountKeys is missing"),
        (_set(("meta",), None), "no meta"),
    ],
)  # fmt: skip
def test_an_answer_without_readable_balances_is_garbage(mangle: Any, reason: str) -> None:
    answer = copy.deepcopy(_answer("usdc-jup"))
    mangle(answer)
    with pytest.raises(ApiGarbageError, match=reason):
        parse_balances(answer)


def test_no_balances_measure_nothing() -> None:
    assert wallet_swap(None, USDC_JUP_WALLET, USDC, JUP).reason == (
        "the node's answer carries no balances"
    )
