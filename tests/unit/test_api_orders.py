"""Pages of getRecurringOrders / getTriggerOrders as the docs show them (and their
older shapes): typed, item by item, with a problem per unreadable part."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from jupcron.api.models import ExecuteResult
from jupcron.api.orders import parse_page, parse_tokens
from jupcron.api.trigger_v2_models import parse_history

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


def trade(**over: Any) -> dict[str, Any]:
    base = {"orderKey": "ORDER1", "keeper": "K", "inputMint": USDC, "outputMint": SOL,
            "inputAmount": "10.0", "outputAmount": "0.058", "rawInputAmount": "10000000",
            "rawOutputAmount": "58000000", "feeMint": SOL, "feeAmount": "0.000058",
            "rawFeeAmount": "58000", "txId": "TX1", "confirmedAt": "2025-03-15T11:30:00.000Z",
            "action": "Fill", "productMeta": None}  # fmt: skip
    return {**base, **over}


def recurring(**over: Any) -> dict[str, Any]:
    base = {"userPubkey": "U", "orderKey": "ORDER1", "inputMint": USDC, "outputMint": SOL,
            "rawInDeposited": "100000000", "rawInWithdrawn": "0", "rawInUsed": "10000000",
            "rawOutReceived": "58000000", "cycleFrequency": 60, "openTx": "OPEN",
            "closeTx": None, "userClosed": False, "createdAt": "2025-03-15T10:30:00.000Z",
            "updatedAt": "2025-03-15T11:30:00.000Z", "trades": [trade()]}  # fmt: skip
    return {**base, **over}


def test_the_documented_recurring_page_is_read() -> None:
    page = parse_page({"user": "U", "orderStatus": "active", "time": [recurring()],
                       "price": [], "all": [], "totalPages": 1, "page": 1}, "time")  # fmt: skip
    assert (page.page, page.total_pages, page.problems) == (1, 1, [])
    (order,) = page.orders
    assert (order.order_key, order.raw_in_deposited, order.raw_in_used) == (
        "ORDER1",
        "100000000",
        "10000000",
    )
    (t,) = order.trades
    assert (t.raw_input_amount, t.raw_output_amount, t.raw_fee_amount) == (
        "10000000",
        "58000000",
        "58000",
    )
    assert t.confirmed_at == datetime(2025, 3, 15, 11, 30, tzinfo=UTC)


def test_the_older_nested_recurring_shape_and_closeTx_empty_string() -> None:
    nested = {"time": {"orders": [recurring(closeTx="")], "totalPages": 2, "page": 1}}
    page = parse_page(nested, "time")
    assert (page.page, page.total_pages) == (1, 2)
    assert page.orders[0].close_tx is None


def test_the_documented_trigger_page_with_trailing_newlines_in_tx_ids() -> None:
    order = {"userPubkey": "U", "orderKey": "T1", "inputMint": SOL, "outputMint": USDC,
             "rawMakingAmount": "50000000", "rawRemainingMakingAmount": "0", "status": "Completed",
             "expiredAt": None, "createdAt": "2025-03-17T08:07:25Z", "openTx": "OPEN\n",
             "closeTx": "CLOSE\n", "trades": [trade(orderKey="T1", txId="CLOSE\n")]}  # fmt: skip
    page = parse_page({"orders": [order], "totalPages": 1, "page": 1}, "orders")
    (read,) = page.orders
    assert (read.status, read.open_tx, read.close_tx) == ("Completed", "OPEN", "CLOSE")
    assert read.trades[0].tx_id == "CLOSE"


@pytest.mark.parametrize("missing", ["txId", "rawOutputAmount", "confirmedAt", "orderKey"])
def test_a_trade_missing_a_field_is_a_problem_and_the_rest_is_kept(missing: str) -> None:
    bad = trade(txId="TX2")
    del bad[missing]
    page = parse_page(
        {"time": [recurring(trades=[trade(), bad])], "totalPages": 1, "page": 1}, "time"
    )
    assert len(page.orders[0].trades) == 1
    assert len(page.problems) == 1
    assert page.problems[0].startswith("order ORDER1: trade 1: ")


def test_an_order_missing_its_key_is_a_problem_and_other_orders_are_kept() -> None:
    bad = recurring()
    del bad["orderKey"]
    page = parse_page(
        {"time": [bad, recurring(orderKey="ORDER2", trades=[])], "totalPages": 1, "page": 1}, "time"
    )
    assert [o.order_key for o in page.orders] == ["ORDER2"]
    assert page.problems


@pytest.mark.parametrize(
    "data",
    [
        [],
        "x",
        {"time": "none", "totalPages": 1, "page": 1},
        {"time": [], "page": 1},
        {"time": [], "totalPages": "x", "page": 1},
    ],
)
def test_a_page_that_cannot_be_read_as_a_whole_is_refused(data: Any) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_page(data, "time")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("expiredAt", 1e20),  # past the platform's time_t: OverflowError
        ("expiredAt", 10**30),
        ("expiredAt", "9" * 30),
        ("expiredAt", float("inf")),  # JSON Infinity, as Python's json reads it
        ("expiredAt", float("nan")),
        ("expiredAt", 253_402_300_800),  # year 10000: ValueError
        ("createdAt", "0001-01-01T00:00:00+01:00"),  # before year 1 in UTC
        ("updatedAt", "9999-12-31T23:59:59-01:00"),  # after year 9999 in UTC
    ],
)
def test_an_order_time_out_of_range_is_a_problem_of_that_order_alone(
    field: str, value: Any
) -> None:
    """Before: ``datetime.fromtimestamp`` raised OverflowError (not ValueError) out of
    `parse_page`, so one such order broke the whole page and the follower's poll."""
    bad = {"orderKey": "T1", "inputMint": SOL, "outputMint": USDC, "trades": [], field: value}
    good = {"orderKey": "T2", "inputMint": SOL, "outputMint": USDC, "trades": []}
    page = parse_page({"orders": [bad, good], "totalPages": 1, "page": 1}, "orders")
    assert [o.order_key for o in page.orders] == ["T2"]
    (problem,) = page.problems
    assert problem.startswith(f"order T1: {field}: ")
    assert "out of range" in problem, problem


@pytest.mark.parametrize("value", [10**30, "9" * 400, 1e308, float("inf")])
def test_a_trigger_v2_history_time_out_of_range_is_a_problem_of_that_order(value: Any) -> None:
    orders = [{"id": "o1", "inputMint": SOL, "outputMint": USDC, "createdAt": value},
              {"id": "o2", "inputMint": SOL, "outputMint": USDC,
               "events": [{"type": "fill", "timestamp": 1_700_000_000_000}]}]  # fmt: skip
    page = parse_history({"orders": orders, "pagination": {"total": 2, "limit": 2, "offset": 0}})
    assert [o.id for o in page.orders] == ["o2"]
    assert page.orders[0].events[0].timestamp == datetime.fromtimestamp(1_700_000_000, UTC)
    (problem,) = page.problems
    assert problem.startswith("order o1: createdAt: ")
    assert "out of range" in problem


def test_tokens_and_swap_events_with_an_amm_key() -> None:
    facts = parse_tokens([{"id": USDC, "symbol": "USDC", "decimals": 6}, {"id": "X"}])
    assert [(f.id, f.decimals, f.symbol) for f in facts] == [(USDC, 6, "USDC")]
    result = ExecuteResult.model_validate(
        {
            "status": "Success",
            "code": 0,
            "swapEvents": [
                {
                    "inputMint": USDC,
                    "inputAmount": "1",
                    "outputMint": SOL,
                    "outputAmount": "2",
                    "ammKey": "AMM",
                },
                {"inputMint": USDC, "inputAmount": "1", "outputMint": SOL, "outputAmount": "2"},
            ],
        }
    )
    assert [e.amm for e in result.swap_events] == ["AMM", None]
