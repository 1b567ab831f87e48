"""`/_emulator/*` control endpoints (drive and check the emulator from another
process) and a minimal Solana JSON-RPC at ``POST /rpc`` answered from the ledger
(and the emulated block height, `State.block_height`). As a node does, it finds a
transaction by its id only, its first signature (the fee payer's): a later
signer's signature is found through ``getSignaturesForAddress`` and
``getTransaction``'s signatures list."""

from __future__ import annotations

import json
from typing import Any

from jupcron.emulator import chain, keeper, txmeta
from jupcron.emulator.common import EmuResponse, State, json_response, parse_pubkey
from jupcron.emulator.ledger import Execution, TriggerOrder

RECENT_SECONDS = 150.0  # what getSignatureStatuses finds without searchTransactionHistory


def _body(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError):
        return None


def _bad(message: str) -> EmuResponse:
    return json_response(400, {"error": message})


def control(state: State, method: str, path: str, body: bytes) -> EmuResponse:
    name = path.removeprefix("/_emulator/").strip("/")
    if method == "GET" and name == "ledger":
        summary = {**state.ledger.summary(), "blockHeight": state.block_height()}
        return json_response(200, {**summary, "triggerV2": state.v2.summary()})
    if method == "GET" and name == "oracle":
        return json_response(200, {"feeds": state.oracle.summary(state.clock())})
    if method == "GET" and name == "faults":
        return json_response(
            200, {"pending": state.faults.pending(), "fired": state.faults.history}
        )
    if method != "POST":
        return json_response(404, {"error": f"no control endpoint {method} {path}"})
    data = _body(body)
    if name == "faults":
        items = data if isinstance(data, list) else [data]
        try:
            added = state.faults.extend(items)
        except ValueError as exc:
            return _bad(str(exc))
        return json_response(200, {"added": [f.summary() for f in added]})
    if name == "faults/clear":
        state.faults.clear()
        return json_response(200, {"cleared": True})
    if name == "reset":
        state.faults.clear()
        state.ledger.reset()
        state.v2.reset()
        state.oracle.reset()
        return json_response(200, {"reset": True})
    if name == "balances":
        return _balances(state, data)
    if name == "trigger-orders":
        return _trigger_order(state, data)
    if name == "trigger-fill":
        return _trigger_fill(state, data)
    if name == "keeper":
        return _keeper(state, data)
    if name == "blocks":
        return _blocks(state, data)
    if name == "oracle":  # move, freeze or back-date a Pyth feed (emulator/oracle.py)
        error = state.oracle.control(data, state.clock())
        if error is not None:
            return _bad(error)
        return json_response(200, {"feeds": state.oracle.summary(state.clock())})
    return json_response(404, {"error": f"no control endpoint POST {path}"})


def _balances(state: State, data: Any) -> EmuResponse:
    items = data if isinstance(data, list) else [data]
    for item in items:
        if not isinstance(item, dict) or parse_pubkey(item.get("owner")) is None:
            return _bad("each balance needs owner (pubkey), mint and amount (integer)")
        amount = item.get("amount")
        if isinstance(amount, str) and amount.isdigit():
            amount = int(amount)
        if not isinstance(amount, int) or parse_pubkey(item.get("mint")) is None:
            return _bad("each balance needs owner (pubkey), mint and amount (integer)")
    for item in items:
        state.ledger.set_balance(item["owner"], item["mint"], int(item["amount"]))
    return json_response(200, {"balances": len(items)})


def _trigger_order(state: State, data: Any) -> EmuResponse:
    """Seed an open limit order, so cancelOrder has something to cancel."""
    if not isinstance(data, dict) or parse_pubkey(data.get("maker")) is None:
        return _bad("a trigger order needs maker (pubkey)")
    order = data.get("order") or str(state.pubkey())
    if parse_pubkey(order) is None:
        return _bad("order must be a pubkey")
    try:
        making = int(data.get("makingAmount", 1_000_000))
        taking = int(data.get("takingAmount", 10_000_000))
    except (TypeError, ValueError):
        return _bad("makingAmount and takingAmount must be integers")
    expired = data.get("expiredAt")
    if expired is not None and not isinstance(expired, int | float):
        return _bad("expiredAt must be unix seconds")
    seeded = TriggerOrder(
        order=order,
        maker=data["maker"],
        input_mint=str(data.get("inputMint", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")),
        output_mint=str(data.get("outputMint", "So11111111111111111111111111111111111111112")),
        making_amount=making,
        taking_amount=taking,
        created_at=state.clock(),
        expired_at=None if expired is None else float(expired),
        open_tx=str(data.get("openTx", "")),
    )
    state.ledger.add_trigger_order(seeded)
    return json_response(200, {"order": order})


def _trigger_fill(state: State, data: Any) -> EmuResponse:
    """Fill an open trigger order (``makingAmount`` of it; default: all that is left)."""
    if not isinstance(data, dict):
        return _bad("give {order, makingAmount?}")
    t_order = state.ledger.trigger_orders.get(str(data.get("order")))
    amount = data.get("makingAmount")
    if t_order is None:
        return _bad("no such trigger order")
    if amount is not None and (not isinstance(amount, int) or amount <= 0):
        return _bad("makingAmount must be a positive integer")
    try:
        trade = keeper.fill_trigger(state, t_order, amount)
    except ValueError as exc:
        return _bad(str(exc))
    return json_response(200, {"trade": trade, "status": t_order.status})


def _keeper(state: State, data: Any) -> EmuResponse:
    """Move the keeper's time ahead (``advance`` seconds) and let it catch up."""
    advance = data.get("advance") if isinstance(data, dict) else None
    if not isinstance(advance, int | float) or isinstance(advance, bool) or advance < 0:
        return _bad("give {advance: seconds >= 0}")
    state.keeper_offset += float(advance)
    keeper.catch_up(state)
    return json_response(200, {"offset": state.keeper_offset, "fills": len(state.ledger.fills)})


def _blocks(state: State, data: Any) -> EmuResponse:
    """Move the chain ``advance`` blocks ahead of its clock (Swap V2 orders expire)."""
    advance = data.get("advance") if isinstance(data, dict) else None
    if not isinstance(advance, int) or isinstance(advance, bool) or advance < 0:
        return _bad("give {advance: a whole number of blocks >= 0}")
    state.block_offset += advance
    return json_response(200, {"blockHeight": state.block_height()})


def _rpc_error(rid: Any, code: int, message: str) -> EmuResponse:
    return json_response(
        200, {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    )


def _err(e: Execution) -> Any:
    return None if e.status == "Success" else {"InstructionError": [2, {"Custom": e.code}]}


def _transaction(e: Execution) -> dict[str, Any]:
    """`getTransaction` (encoding ``json``) of a landed transaction: what a node gives
    that the daemon reads (its signatures in order, its keys, its outcome, and a
    swap's balances before and after: `jupcron.emulator.txmeta`)."""
    status = {"Ok": None} if _err(e) is None else {"Err": _err(e)}
    return {
        "slot": e.slot,
        "blockTime": int(e.at),
        "meta": {"err": _err(e), "status": status, **txmeta.meta(e)},
        "transaction": {
            "signatures": list(e.all_signatures),
            "message": {"accountKeys": list(e.all_accounts)},
        },
        "version": 0,
    }


def _address_signatures(found: list[Execution], options: dict[str, Any]) -> list[dict[str, Any]]:
    """`getSignaturesForAddress`: the ids (first signatures) newest first, after the
    page's ``before`` id, at most ``limit`` (1000 by default, as a node's)."""
    ids = [e.signature for e in found]
    before = options.get("before")
    if isinstance(before, str):
        found = found[ids.index(before) + 1 :] if before in ids else []
    limit = options.get("limit")
    count = limit if isinstance(limit, int) and 0 < limit <= 1000 else 1000
    return [
        {
            "signature": e.signature,
            "slot": e.slot,
            "err": _err(e),
            "memo": None,
            "blockTime": int(e.at),
            "confirmationStatus": "finalized",
        }
        for e in found[:count]
    ]


def rpc(state: State, body: bytes) -> EmuResponse:
    data = _body(body)
    if not isinstance(data, dict):
        return _rpc_error(None, -32700, "Parse error")
    rid, method, params = data.get("id"), data.get("method"), data.get("params") or []
    ledger = state.ledger
    if method == "getHealth":
        result: Any = "ok"
    elif method == "getSlot":
        result = ledger.slot
    elif method == "getBlockHeight":
        result = state.block_height()
    elif method == "getSignatureStatuses":
        if not params or not isinstance(params[0], list):
            return _rpc_error(rid, -32602, "Invalid params")
        options = params[1] if len(params) > 1 and isinstance(params[1], dict) else {}
        history = bool(options.get("searchTransactionHistory"))
        now = state.clock()
        value: list[dict[str, Any] | None] = []
        for sig in params[0]:
            e = ledger.execution(str(sig))
            if e is None or not e.landed or (not history and now - e.at > RECENT_SECONDS):
                value.append(None)
                continue
            err = _err(e)
            value.append(
                {
                    "slot": e.slot,
                    "confirmations": None,
                    "err": err,
                    "status": {"Ok": None} if err is None else {"Err": err},
                    "confirmationStatus": "finalized",
                }
            )
        result = {"context": {"slot": ledger.slot}, "value": value}
    elif method == "getTransaction":
        options = params[1] if len(params) > 1 and isinstance(params[1], dict) else {}
        if options.get("maxSupportedTransactionVersion") is None:
            return _rpc_error(rid, -32015, "Transaction version (0) is not supported")
        e = ledger.execution(str(params[0])) if params else None  # by its id only
        result = None if e is None or not e.landed else _transaction(e)
    elif method == "getSignaturesForAddress":
        if not params or not isinstance(params[0], str):
            return _rpc_error(rid, -32602, "Invalid params")
        options = params[1] if len(params) > 1 and isinstance(params[1], dict) else {}
        result = _address_signatures(ledger.touching(params[0]), options)
    elif method == "getMultipleAccounts":
        if not params or not isinstance(params[0], list):
            return _rpc_error(rid, -32602, "Invalid params")
        result = chain.multiple_accounts(state, [str(a) for a in params[0]])
    elif method == "getAccountInfo":
        if not params or not isinstance(params[0], str):
            return _rpc_error(rid, -32602, "Invalid params")
        many = chain.multiple_accounts(state, [params[0]])
        result = {"context": many["context"], "value": many["value"][0]}
    elif method == "simulateTransaction":
        options = params[1] if len(params) > 1 and isinstance(params[1], dict) else {}
        simulated = chain.simulate(state, str(params[0]), options) if params else None
        if simulated is None:
            return _rpc_error(rid, -32602, "invalid transaction: failed to deserialize")
        result = simulated
    else:
        return _rpc_error(rid, -32601, "Method not found")
    return json_response(200, {"jsonrpc": "2.0", "id": rid, "result": result})
