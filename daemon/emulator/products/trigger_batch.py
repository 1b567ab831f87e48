"""The emulator's Trigger v1 ``cancelOrders`` (trigger/v1/cancel-order.mdx, "Cancel
Orders"): the named open orders of the maker, or all of them when none are named,
5 cancels to a transaction, every transaction under one ``requestId``; the twin of
`jupcron.products.trigger_batch`."""

from __future__ import annotations

from solders.pubkey import Pubkey

from jupcron.emulator.common import EmuResponse, State, json_response
from jupcron.emulator.faults import Fault
from jupcron.emulator.ledger import TriggerOrder
from jupcron.emulator.orders import envelope, issue
from jupcron.emulator.products.trigger import cancel_request

BATCH = 5


def group_id(request_id: str, n: int) -> str:
    """Where the `n`-th transaction of a request is remembered (the first: the request's)."""
    return request_id if n == 0 else f"{request_id}#{n}"


def cancel_orders(state: State, body: bytes, hostile: Fault | None) -> EmuResponse:
    asked = cancel_request(body, "invalid cancel orders request")
    if isinstance(asked, EmuResponse):
        return asked
    data, maker, cu_price = asked
    named = data.get("orders")
    if named is None:
        held = [o for o in state.ledger.trigger_orders.values()
                if o.maker == str(maker) and o.status == "Open"]  # fmt: skip
    elif isinstance(named, list) and named:
        found = [state.ledger.open_trigger_order(str(o), str(maker)) for o in named]
        held = [o for o in found if o is not None]
    else:
        return envelope("invalid cancel orders request", cause="orders")
    if not held:
        return envelope("no matching orders found")
    request_id = state.request_id()
    transactions = [
        _issue(
            state, maker, hostile, group_id(request_id, n // BATCH), held[n : n + BATCH], cu_price
        )
        for n in range(0, len(held), BATCH)
    ]
    return json_response(200, {"requestId": request_id, "transactions": transactions})


def _issue(
    state: State, maker: Pubkey, hostile: Fault | None, request_id: str,
    group: list[TriggerOrder], cu_price: int,
) -> str:  # fmt: skip
    batch = [(Pubkey.from_string(o.order), Pubkey.from_string(o.input_mint)) for o in group]
    return issue(
        state, "trigger_cancel_batch", maker, hostile, request_id=request_id,
        input_mint=group[0].input_mint, output_mint=group[0].output_mint,
        in_amount=sum(o.left for o in group), compute_unit_price=cu_price,
        shape={"batch": batch}, extra={"orders": [o.order for o in group]},
    )  # fmt: skip
