"""The emulator's Trigger v1 ``cancelOrder``: the twin of `jupcron.products.trigger`;
and what it shares with ``cancelOrders`` (`cancel_request`: the body, the maker,
the compute-unit price, and the API's 400s when one is wrong)."""

from __future__ import annotations

from typing import Any

from solders.pubkey import Pubkey

from jupcron.emulator import txbuild
from jupcron.emulator.common import (
    EmuResponse,
    State,
    json_response,
    parse_json_object,
    parse_pubkey,
)
from jupcron.emulator.faults import Fault
from jupcron.emulator.orders import envelope, issue


def cancel_request(body: bytes, invalid: str) -> tuple[dict[str, Any], Pubkey, int] | EmuResponse:
    """A Trigger v1 cancel's body, maker and compute-unit price (``auto``: the
    default); else the API's 400, `invalid` naming the request."""
    data = parse_json_object(body)
    if data is None:
        return envelope(invalid)
    maker = parse_pubkey(data.get("maker"))
    if maker is None:
        return envelope("invalid maker pubkey")
    cu = data.get("computeUnitPrice", "auto")
    if cu == "auto":
        return data, maker, txbuild.DEFAULT_CU_PRICE
    if isinstance(cu, str) and cu.isdigit():
        return data, maker, int(cu)
    return envelope(invalid, cause="computeUnitPrice")


def cancel_trigger(state: State, body: bytes, hostile: Fault | None) -> EmuResponse:
    asked = cancel_request(body, "invalid cancel order request")
    if isinstance(asked, EmuResponse):
        return asked
    data, maker, cu_price = asked
    order = state.ledger.open_trigger_order(str(data.get("order")), str(maker))
    if order is None:
        return envelope("no matching orders found")
    request_id = state.request_id()
    tx = issue(
        state,
        "trigger_cancel",
        maker,
        hostile,
        request_id=request_id,
        input_mint=order.input_mint,
        output_mint=order.output_mint,
        in_amount=order.left,  # what it refunds: the unfilled input (as cancelOrders)
        order=order.order,
        compute_unit_price=cu_price,
    )
    return json_response(200, {"requestId": request_id, "transaction": tx})
