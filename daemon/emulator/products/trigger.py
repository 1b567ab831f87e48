"""The emulator's Trigger v1 ``cancelOrder``: the twin of `jupcron.products.trigger`."""

from __future__ import annotations

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


def cancel_trigger(state: State, body: bytes, hostile: Fault | None) -> EmuResponse:
    data = parse_json_object(body)
    if data is None:
        return envelope("invalid cancel order request")
    maker = parse_pubkey(data.get("maker"))
    if maker is None:
        return envelope("invalid maker pubkey")
    cu = data.get("computeUnitPrice", "auto")
    if cu == "auto":
        cu_price = txbuild.DEFAULT_CU_PRICE
    elif isinstance(cu, str) and cu.isdigit():
        cu_price = int(cu)
    else:
        return envelope("invalid cancel order request", cause="computeUnitPrice")
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
        in_amount=order.making_amount,
        order=order.order,
        compute_unit_price=cu_price,
    )
    return json_response(200, {"requestId": request_id, "transaction": tx})
