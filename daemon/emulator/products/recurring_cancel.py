"""The emulator's Recurring ``cancelOrder`` (one order a transaction, the DCA
program's ``close_dca``): the twin of `jupcron.products.recurring_cancel`. An
order account that holds no open order of this user is the docs' failed example
(400, "Failed to deserialize account data ...")."""

from __future__ import annotations

from jupcron.emulator.common import (
    EmuResponse,
    State,
    json_response,
    parse_json_object,
    parse_pubkey,
)
from jupcron.emulator.faults import Fault
from jupcron.emulator.ledger import RecurringOrder
from jupcron.emulator.orders import issue

GONE = "Failed to deserialize account data: failed to fill whole buffer"


def _error(message: str) -> EmuResponse:
    return json_response(400, {"code": 400, "error": message, "status": "Bad Request"})


def open_order(state: State, order: str, user: str) -> RecurringOrder | None:
    held = state.ledger.recurring_orders.get(order)
    if held is None or held.user != user or held.status != "active":
        return None
    return held


def cancel_recurring(state: State, body: bytes, hostile: Fault | None) -> EmuResponse:
    data = parse_json_object(body)
    if data is None:
        return _error("invalid request body")
    user = parse_pubkey(data.get("user"))
    if user is None:
        return _error("invalid user pubkey")
    if data.get("recurringType") not in ("time", "price"):
        return _error("recurringType must be time or price")
    held = open_order(state, str(data.get("order")), str(user))
    if held is None:
        return _error(GONE)
    request_id = state.request_id()
    tx = issue(
        state, "recurring_cancel", user, hostile, request_id=request_id,
        input_mint=held.input_mint, output_mint=held.output_mint,
        in_amount=held.in_amount - held.in_used, order=held.order,
    )  # fmt: skip
    return json_response(200, {"requestId": request_id, "transaction": tx})
