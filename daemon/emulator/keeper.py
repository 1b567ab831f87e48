"""The emulator's keeper: what Jupiter's keepers do to open orders over time.

Recurring (time) orders are filled round by round: round k (0-based) is due at
``start + k * interval / speed`` of the emulator's clock (plus the offset that
``POST /_emulator/keeper {"advance": s}`` adds), each spending
``inAmount // numberOfOrders`` (the last round takes the remainder), at a price
that moves from round to round, minus a 0.1% fee taken in the output mint. The
output goes to the user's wallet. Trigger orders fill when told to
(`fill_trigger`), expire at ``expiredAt`` (what was left goes back to the
maker), and are cancelled by an executed cancelOrder (the rest is refunded).

`catch_up` runs before every request the emulator handles, so time is only
ever the clock's: tests move the clock, nothing runs in the background.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from solders.signature import Signature

from jupcron.emulator.common import State, quote, token
from jupcron.emulator.ledger import RecurringOrder, RecurringOrders, TriggerOrder

FEE_BPS = 10  # the recurring fee, 0.1%, in the output mint
PRICE_SWING = Decimal("0.04")  # the price moves within +-4% around the quote


def iso(moment: float) -> str:
    return (
        datetime.fromtimestamp(moment, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def ui(mint: str, amount: int) -> str:
    return str(Decimal(amount) / (Decimal(10) ** token(mint).decimals))


def price_factor(order: str, round_no: int) -> Decimal:
    """A deterministic move of the price for this order's round."""
    phase = int.from_bytes(hashlib.sha256(order.encode()).digest()[:4], "big") / 2**32 * 6.283
    wave = Decimal(str(round(math.sin(phase + round_no * 0.9), 6)))
    return Decimal(1) + PRICE_SWING * wave


def _tx(state: State) -> str:
    return str(Signature(state.rng.randbytes(64)))


def _trade(order_key: str, in_mint: str, out_mint: str, spent: int, got: int, fee: int,
           tx: str, at: float, keeper: str) -> dict[str, Any]:  # fmt: skip
    return {
        "orderKey": order_key, "keeper": keeper, "inputMint": in_mint, "outputMint": out_mint,
        "inputAmount": ui(in_mint, spent), "outputAmount": ui(out_mint, got),
        "rawInputAmount": str(spent), "rawOutputAmount": str(got), "feeMint": out_mint,
        "feeAmount": ui(out_mint, fee), "rawFeeAmount": str(fee), "txId": tx,
        "confirmedAt": iso(at), "action": "Fill", "productMeta": None,
    }  # fmt: skip


def keeper_now(state: State) -> float:
    return state.clock() + state.keeper_offset


def catch_up(state: State) -> None:
    """Fill every round that is due, expire what has expired. The recurring orders are
    taken in the order their next round is due (`RecurringOrders`): those with nothing
    due are not looked at."""
    now = keeper_now(state)
    orders = state.ledger.recurring_orders
    placed, orders.placed = orders.placed, []
    for key in placed:
        _queue(state, orders, key)
    while orders.due and orders.due[0][0] <= now:
        when, _, key = heapq.heappop(orders.due)
        if orders.queued.get(key) != when:
            continue  # an entry replaced by a later one
        del orders.queued[key]
        order = orders.get(key)
        if order is None:
            continue  # taken out (a test's); queued again if it is put back
        while order.status == "active" and order.rounds < order.number_of_orders:
            due = _round_due(state, order, order.rounds)
            if due > now:
                break
            _fill_round(state, order, due)
        _queue(state, orders, key)
    for t_order in list(state.ledger.trigger_orders.values()):
        expires = t_order.expired_at
        if t_order.status == "Open" and expires is not None and expires <= now:
            _close_trigger(state, t_order, "Expired", _tx(state), expires)


def _queue(state: State, orders: RecurringOrders, key: str) -> None:
    """`key`'s next round in `orders.due`, if it has one to come (once: an entry for the
    same time is not made twice)."""
    order = orders.get(key)
    if order is None or order.status != "active" or order.rounds >= order.number_of_orders:
        return
    when = _round_due(state, order, order.rounds)
    if orders.queued.get(key) != when:
        orders.queued[key] = when
        heapq.heappush(orders.due, (when, next(orders.ties), key))


def _round_due(state: State, order: RecurringOrder, k: int) -> float:
    start = order.start_at if order.start_at is not None else order.created_at
    return start + k * order.interval / state.keeper_speed


def _fill_round(state: State, order: RecurringOrder, at: float) -> None:
    ledger = state.ledger
    k = order.rounds
    per_round = order.in_amount // order.number_of_orders
    spend = per_round if k < order.number_of_orders - 1 else order.in_amount - order.in_used
    gross = int(Decimal(quote(order.input_mint, order.output_mint, spend)) * price_factor(
        order.order, k))  # fmt: skip
    fee = gross * FEE_BPS // 10_000
    got = gross - fee
    tx = _tx(state)
    trade = _trade(order.order, order.input_mint, order.output_mint, spend, got, fee, tx, at,
                   keeper=str(state.pubkey()))  # fmt: skip
    order.trades.append(trade)
    order.rounds += 1
    order.in_used += spend
    order.out_received += got
    order.updated_at = at
    ledger.move(order.user, None, (order.output_mint, got))
    ledger.fills.append({"kind": "recurring", "order": order.order, "round": k, "in": spend,
                         "out": got, "fee": fee, "txId": tx, "at": at})  # fmt: skip
    if order.rounds >= order.number_of_orders:
        order.status = "completed"
        order.close_tx = tx


def fill_trigger(state: State, t_order: TriggerOrder, amount: int | None = None) -> dict[str, Any]:
    """Fill `amount` (default: all that is left) of an open trigger order at its price."""
    left = t_order.left
    spend = left if amount is None else min(amount, left)
    if t_order.status != "Open" or spend <= 0:
        raise ValueError("the order is not open or has nothing left to fill")
    now = keeper_now(state)
    gross = t_order.taking_amount * spend // t_order.making_amount
    fee = gross * FEE_BPS // 10_000
    got = gross - fee
    tx = _tx(state)
    trade = _trade(t_order.order, t_order.input_mint, t_order.output_mint, spend, got, fee, tx,
                   now, keeper=str(state.pubkey()))  # fmt: skip
    t_order.trades.append(trade)
    t_order.remaining = left - spend
    t_order.updated_at = now
    if t_order.maker is not None:  # an example order no wallet has claimed pays no one
        state.ledger.move(t_order.maker, None, (t_order.output_mint, got))
    state.ledger.fills.append({"kind": "trigger", "order": t_order.order, "in": spend, "out": got,
                               "fee": fee, "txId": tx, "at": now})  # fmt: skip
    if t_order.remaining == 0:
        t_order.status = "Completed"
        t_order.close_tx = tx
    return trade


def cancel_recurring(state: State, order: RecurringOrder, signature: str) -> None:
    """An executed recurring cancelOrder (``close_dca``): the input left goes back."""
    refund = order.in_amount - order.in_used
    order.status = "cancelled"
    order.close_tx = signature
    order.updated_at = keeper_now(state)
    state.ledger.move(order.user, None, (order.input_mint, refund))


def cancel_trigger(state: State, t_order: TriggerOrder, signature: str) -> None:
    """An executed cancelOrder: what was left goes back to the maker."""
    _close_trigger(state, t_order, "Cancelled", signature, keeper_now(state))


def _close_trigger(state: State, t_order: TriggerOrder, status: str, tx: str, at: float) -> None:
    refund = t_order.left
    t_order.status = status
    t_order.refunded = refund
    t_order.close_tx = tx
    t_order.updated_at = at
    if t_order.maker is not None:
        state.ledger.move(t_order.maker, None, (t_order.input_mint, refund))
