"""Trigger V2 cancels, confirm-cancels and the keeper's fills in the emulator.

Cancel crafts a withdrawal of what is left (kind ``trigger_v2_withdraw``, the
documented shape: `jupcron.emulator.products.trigger_v2.tx.withdrawal`); a hostile cancel
(fault ``hostile`` on ``trigger_v2_cancel``) withdraws to a stranger.
Confirm-cancel lands it: the vault's remainder back to the wallet (or, with
``V2State.misreported``, lands nothing and answers another signature; with
``misreported_landed``, lands it and answers another signature). The keeper
fills DCA rounds from the vault, output straight to the wallet, and expires
price orders (their deposit stays in the vault until a cancel withdraws it).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from solders.pubkey import Pubkey

from jupcron.emulator import txbuild
from jupcron.emulator.common import EmuResponse, State, json_response, parse_json_object, quote
from jupcron.emulator.faults import Fault
from jupcron.emulator.keeper import iso, keeper_now, price_factor
from jupcron.emulator.ledger import IssuedOrder
from jupcron.emulator.products.trigger_v2 import tx as txs
from jupcron.emulator.products.trigger_v2.orders import STRANGER, _error, _execution, _verified
from jupcron.emulator.products.trigger_v2.state import V2Order

# --- cancel ------------------------------------------------------------------------

CANCELLABLE = {"dca": ("active", "withdrawing"), "price": ("open", "ready_to_cancel", "expired")}
WITHDRAWING = {"dca": "withdrawing", "price": "ready_to_cancel"}


def _mine(state: State, wallet: str, family: str, order_id: str) -> V2Order | EmuResponse:
    order = state.v2.orders.get(order_id)
    if order is None or order.family != family or order.user != wallet:
        what = "DCA order not found or you do not own it" if family == "dca" else "Order not found"
        return _error(404, what)
    return order


def cancel(
    state: State, wallet: str, family: str, order_id: str, hostile: Fault | None
) -> EmuResponse:
    order = _mine(state, wallet, family, order_id)
    if isinstance(order, EmuResponse):
        return order
    if order.state not in CANCELLABLE[family]:
        if family == "dca":
            return _error(400, f"Cannot cancel DCA order in '{order.state}' state")
        return _error(400, "Order is not in a cancellable state")
    refund = order.left
    if refund <= 0:
        return _error(400, "No remaining funds to withdraw")
    order.state, order.updated_at = WITHDRAWING[family], state.clock()
    request_id = state.request_id()
    order.cancel_request_id = request_id
    to = STRANGER if hostile is not None else None
    tx = txs.withdrawal(
        Pubkey.from_string(wallet), Pubkey.from_string(order.vault),
        Pubkey.from_string(order.input_mint), Pubkey.from_string(order.token_account), refund,
        rng=state.rng, to=to,
    )  # fmt: skip
    state.ledger.issue(
        IssuedOrder(
            request_id=request_id, kind="trigger_v2_withdraw", owner=wallet,
            message=txbuild.message_bytes(tx), issued_at=state.clock(),
            input_mint=order.input_mint, output_mint=order.output_mint, in_amount=refund,
            order=order.id, hostile=hostile is not None, extra={"vault": order.vault},
        )
    )  # fmt: skip
    answer: dict[str, Any] = {"id": order.id, "transaction": txbuild.to_b64(tx),
                              "requestId": request_id}  # fmt: skip
    if family == "dca":
        answer.update(refundAmount=str(refund),
                      roundsRemaining=order.order_count - order.rounds_filled)  # fmt: skip
    return json_response(200, answer)


def confirm_cancel(
    state: State, wallet: str, family: str, order_id: str, body: bytes
) -> EmuResponse:
    order = _mine(state, wallet, family, order_id)
    if isinstance(order, EmuResponse):
        return order
    data = parse_json_object(body) or {}
    if order.state != WITHDRAWING[family]:
        what = "DCA order not in cancellation state" if family == "dca" else (
            "Order is not pending withdrawal")  # fmt: skip
        return _error(400, what)
    request_id = data.get("cancelRequestId")
    issued = state.ledger.get_issued(str(request_id))
    if request_id != order.cancel_request_id or issued is None:
        return _error(
            400, "Withdrawal transaction not found in cache. Please initiate cancel again."
        )
    signature = _verified(str(data.get("signedTransaction")), issued)
    if isinstance(signature, EmuResponse):
        return signature
    if state.clock() - issued.issued_at > state.blockhash_ttl:
        return _error(400, "Withdrawal transaction failed to land: blockhash expired")
    if state.v2.misreported > 0:  # nothing lands; the answer names another signature
        state.v2.misreported -= 1
        return json_response(200, {"id": order.id, "txSignature": txs.random_signature(state.rng)})
    refund = issued.in_amount
    state.ledger.move(order.vault, (order.input_mint, refund), None)
    state.ledger.move(wallet, None, (order.input_mint, refund))
    _execution(state, issued, signature, refund)
    now = state.clock()
    order.state, order.updated_at, order.cancel_request_id = "cancelled", now, None
    stamp: Any = iso(now) if family == "dca" else int(now * 1000)
    withdrawal: dict[str, Any] = {"type": "withdrawal", "timestamp": stamp,
                                  "txSignature": signature, "state": "success"}  # fmt: skip
    if family == "dca":
        withdrawal["inputAmount"] = str(refund)
    else:
        withdrawal.update(mint=order.input_mint, amount=str(refund))
    order.events += [withdrawal, {"type": "cancelled", "timestamp": stamp, "state": "success"}]
    if state.v2.misreported_landed > 0:  # landed, but the answer names another signature
        state.v2.misreported_landed -= 1
        signature = txs.random_signature(state.rng)
    answered = order.id
    if state.v2.misnamed > 0:  # landed, but the answer names another order
        state.v2.misnamed -= 1
        answered = state.request_id()
    return json_response(200, {"id": answered, "txSignature": signature})


# --- the keeper --------------------------------------------------------------------


def catch_up(state: State) -> None:
    """Fill the DCA rounds that are due (output straight to the wallet), expire
    price orders whose time has come (their deposit stays in the vault)."""
    now = keeper_now(state)
    for order in list(state.v2.orders.values()):
        if order.family == "dca":
            while order.state == "active" and order.rounds_filled < order.order_count:
                due = (
                    order.begin_fill_at + order.rounds_filled * order.interval / state.keeper_speed
                )
                if due > now:
                    break
                _fill_round(state, order, due)
        elif order.state == "open" and order.expires_at_ms and order.expires_at_ms <= now * 1000:
            order.state, order.updated_at = "expired", now
            order.events.append({"type": "expired", "timestamp": order.expires_at_ms,
                                 "state": "success"})  # fmt: skip


def _fill_round(state: State, order: V2Order, at: float) -> None:
    last = order.rounds_filled == order.order_count - 1
    spend = order.left if last else order.amount // order.order_count
    got = int(Decimal(quote(order.input_mint, order.output_mint, spend))
              * price_factor(order.id, order.rounds_filled))  # fmt: skip
    state.ledger.move(order.vault, (order.input_mint, spend), None)
    state.ledger.move(order.user, None, (order.output_mint, got))
    order.rounds_filled += 1
    order.in_used += spend
    order.out_total += got
    order.updated_at = at
    order.events.append({
        "type": "fill", "timestamp": iso(at), "txSignature": txs.random_signature(state.rng),
        "roundNumber": order.rounds_filled, "inputAmount": str(spend),
        "outputAmount": str(got), "state": "success",
    })  # fmt: skip
    if order.rounds_filled == order.order_count:
        order.state = "completed"
