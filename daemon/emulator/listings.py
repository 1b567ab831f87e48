"""The read side: ``getRecurringOrders``, ``getTriggerOrders`` (10 orders a page,
newest first, in the documented shapes: docs/fills-api.md) and Tokens V2
``/search``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupcron.emulator.common import TOKENS, EmuResponse, State, json_response, parse_pubkey
from jupcron.emulator.keeper import iso, ui
from jupcron.emulator.ledger import RecurringOrder, TriggerOrder

PAGE_SIZE = 10
MISSING = "user and orderStatus (active|history) are required"


def _bad_request(message: str) -> EmuResponse:
    return json_response(400, {"code": 400, "error": message, "status": "Bad Request"})


TRIGGER_PROGRAM = "j1o2qRpjcyUwEvwtcfhEQefh773ZgjxcVRry7LDqg5X"


def _paged(items: list[Any], query: Mapping[str, str]) -> tuple[list[Any], int, int]:
    """The page asked for of `items` (orders: only that page's are then rendered, so a
    wallet with thousands of orders costs a page's work per page, not the whole list's)."""
    text = query.get("page", "1") or "1"
    page = int(text) if text.isdigit() and int(text) > 0 else 1
    total = max(1, -(-len(items) // PAGE_SIZE))
    return items[(page - 1) * PAGE_SIZE : page * PAGE_SIZE], page, total


def _status(query: Mapping[str, str]) -> str | None:
    status = query.get("orderStatus")
    return status if status in ("active", "history") else None


def _recurring_item(o: RecurringOrder) -> dict[str, Any]:
    per_round = o.in_amount // max(o.number_of_orders, 1)
    withdrawn = o.in_amount - o.in_used if o.status == "cancelled" else 0
    return {
        "userPubkey": o.user, "orderKey": o.order, "inputMint": o.input_mint,
        "outputMint": o.output_mint, "inDeposited": ui(o.input_mint, o.in_amount),
        "inWithdrawn": ui(o.input_mint, withdrawn), "rawInDeposited": str(o.in_amount),
        "rawInWithdrawn": str(withdrawn), "cycleFrequency": o.interval,
        "outWithdrawn": ui(o.output_mint, o.out_received),
        "inAmountPerCycle": ui(o.input_mint, per_round), "minOutAmount": "0",
        "maxOutAmount": "0", "inUsed": ui(o.input_mint, o.in_used),
        "outReceived": ui(o.output_mint, o.out_received),
        "rawOutWithdrawn": str(o.out_received), "rawInAmountPerCycle": str(per_round),
        "rawMinOutAmount": "0", "rawMaxOutAmount": "0", "rawInUsed": str(o.in_used),
        "rawOutReceived": str(o.out_received), "openTx": o.signature,
        "closeTx": o.close_tx or None, "userClosed": o.status == "cancelled",
        "createdAt": iso(o.created_at), "updatedAt": iso(o.updated_at or o.created_at),
        "trades": [dict(t) for t in o.trades],
    }  # fmt: skip


def recurring_orders(state: State, query: Mapping[str, str]) -> EmuResponse:
    user, status = query.get("user", ""), _status(query)
    if parse_pubkey(user) is None or status is None:
        return _bad_request(MISSING)
    kind = query.get("recurringType", "time")
    if kind not in ("time", "price", "all"):
        return _bad_request("invalid recurringType")
    mint = query.get("mint")  # required by the spec, nullable: empty means every mint
    if mint is None:
        return _bad_request("mint is required (empty for every mint)")
    if mint and parse_pubkey(mint) is None:
        return _bad_request("invalid mint")
    mine = [o for o in state.ledger.recurring_orders.values() if o.user == user
            and (not mint or mint in (o.input_mint, o.output_mint))]  # fmt: skip
    wanted = [o for o in mine if (o.status == "active") == (status == "active")]
    wanted.sort(key=lambda o: (o.created_at, o.order), reverse=True)
    page_orders, page, total = _paged(wanted if kind != "price" else [], query)
    page_items = [_recurring_item(o) for o in page_orders]
    if kind == "all":
        page_items = [{**item, "recurringType": "time"} for item in page_items]
    # one of `time`, `price`, `all`: the one asked for (the spec's oneOf)
    answer: dict[str, Any] = {"user": user, "orderStatus": status, kind: page_items,
                              "totalPages": total, "page": page}  # fmt: skip
    return json_response(200, answer)


def _trigger_item(o: TriggerOrder) -> dict[str, Any]:
    left = o.left
    taking_left = o.taking_amount * left // o.making_amount if o.making_amount else 0
    return {
        "userPubkey": o.maker, "orderKey": o.order, "inputMint": o.input_mint,
        "outputMint": o.output_mint, "makingAmount": ui(o.input_mint, o.making_amount),
        "takingAmount": ui(o.output_mint, o.taking_amount),
        "remainingMakingAmount": ui(o.input_mint, left),
        "remainingTakingAmount": ui(o.output_mint, taking_left),
        "rawMakingAmount": str(o.making_amount), "rawTakingAmount": str(o.taking_amount),
        "rawRemainingMakingAmount": str(left), "rawRemainingTakingAmount": str(taking_left),
        "slippageBps": "0",
        "expiredAt": None if o.expired_at is None else str(int(o.expired_at)),
        "createdAt": iso(o.created_at), "updatedAt": iso(o.updated_at or o.created_at),
        "status": o.status, "openTx": o.open_tx, "closeTx": o.close_tx,
        "programVersion": TRIGGER_PROGRAM, "trades": [dict(t) for t in o.trades],
    }  # fmt: skip


def trigger_orders(state: State, query: Mapping[str, str]) -> EmuResponse:
    user, status = query.get("user", ""), _status(query)
    if parse_pubkey(user) is None or status is None:
        return json_response(400, {"error": MISSING, "code": 400})
    mine = [o for o in state.ledger.trigger_orders.values() if o.maker == user]
    wanted = [o for o in mine if (o.status == "Open") == (status == "active")]
    wanted.sort(key=lambda o: (o.created_at, o.order), reverse=True)
    page_orders, page, total = _paged(wanted, query)
    page_items = [_trigger_item(o) for o in page_orders]
    return json_response(200, {"user": user, "orderStatus": status, "orders": page_items,
                               "totalPages": total, "page": page})  # fmt: skip


def token_search(state: State, query: Mapping[str, str]) -> EmuResponse:
    """Tokens V2 ``GET /tokens/v2/search?query=MINT[,MINT...]``: an array of
    ``MintInformation`` (openapi-spec/tokens/v2/tokens.yaml), the fields we read and a
    few more; ``usdPrice`` follows the emulator's oracle where it was moved. A mint it
    does not know is left out, as the API leaves out what it cannot find."""
    text = query.get("query", "")
    if not text:
        return json_response(400, {"error": "query is required"})
    found = []
    for mint in [m.strip() for m in text.split(",") if m.strip()][:100]:
        t = TOKENS.get(mint)
        if t is None:
            continue
        usd = state.oracle.usd(mint) or t.usd
        found.append({"id": mint, "name": t.name or t.symbol, "symbol": t.symbol,
                      "icon": None, "decimals": t.decimals, "tokenProgram": t.program,
                      "isVerified": True, "tags": ["verified"], "usdPrice": float(usd),
                      "updatedAt": "2026-11-25T00:00:00Z"})  # fmt: skip
    return json_response(200, found)
