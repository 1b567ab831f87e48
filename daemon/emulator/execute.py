"""The four execute calls: verify the signed transaction against the one
issued for the requestId, decide the outcome once, and answer in each
product's own shape. Re-posting the same signed transaction returns the
first answer (no second landing) while the request is still known.

Swap V2 answers like Ultra, with its own expiry: the order's
``lastValidBlockHeight`` against the emulated block height (past it: ``-1004``,
invalid block height, decided and kept like any outcome). A
``lastValidBlockHeight`` sent with execute must be the order's (else ``-1004``,
nothing decided: the docs call it optional and say no more, so the emulator
holds a client to passing back exactly what it was given).

A JupiterZ (RFQ) fill (`swap.market_maker`) carries the taker's signature second;
the emulator then signs it as the market maker and sends it, so it lands under
the MAKER's signature, the transaction's id, which the answer's ``signature`` is
(jup-ag/rfq-webhook-toolkit README: the maker signs and sends). Its quote holds
until ``expireAt``: past it the maker sends nothing (``-2003``, quote expired)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from jupcron.emulator import chain, keeper, txbuild
from jupcron.emulator.common import (
    SWAP_FEE_BPS,
    EmuResponse,
    State,
    json_response,
    parse_json_object,
)
from jupcron.emulator.faults import Fault, FaultKind, request_fields
from jupcron.emulator.ledger import SOL_MINT, Execution, IssuedOrder, RecurringOrder
from jupcron.emulator.products.swap import market_maker
from jupcron.emulator.products.trigger_batch import group_id

# which issued kinds each execute endpoint accepts
ACCEPTS = {
    "execute_recurring": {"recurring", "recurring_price", "recurring_cancel"},
    "execute_trigger": {"trigger_cancel", "trigger_cancel_batch"},
    "execute_ultra": {"swap"},
    "execute_swap": {"swap"},
}
SWAP_EXECUTES = ("execute_ultra", "execute_swap")  # the same answer shape and codes
INVALID_HEIGHT = -1004  # Swap V2: "invalid block height"
QUOTE_EXPIRED = -2003  # RFQ: "User did not respond in time or RFQ provider did not execute"
NOT_FOUND = "Order not found, it might have expired"


def _reject(operation: str, ultra_code: int, message: str, cause: str | None = None) -> EmuResponse:
    """A request-level refusal (nothing decided, nothing stored)."""
    if operation in SWAP_EXECUTES:
        if ultra_code in (-1, -4, -5):  # documented without a `status` field
            return json_response(400, {"code": ultra_code, "error": message})
        return json_response(200, {"status": "Failed", "code": ultra_code, "error": message})
    data: dict[str, Any] = {"error": message, "code": 400, "status": "Failed"}
    if cause:
        data["cause"] = cause
    return json_response(400, data)


def _blocks(fault: Fault | None) -> bool:
    """An expiry fault (the transaction is treated as expired); a timed-out one lands."""
    return fault is not None and fault.kind == FaultKind.EXPIRED


def _answer(operation: str, e: Execution, order: IssuedOrder) -> tuple[int, dict[str, Any]]:
    ok = e.status == "Success"
    if operation == "execute_recurring":
        return 200, {
            "signature": e.signature,
            "status": e.status,
            "order": order.order if ok else None,
            "error": e.error,
        }
    if operation == "execute_trigger":
        if ok:
            return 200, {"status": "Success", "signature": e.signature, "code": 0}
        http = e.code if e.code in (400, 500) else 500
        return http, {"error": e.error, "code": http, "signature": e.signature, "status": "Failed"}
    data: dict[str, Any] = {
        "status": e.status,
        "signature": e.signature,
        "slot": str(e.slot if e.landed else 0),
        "code": e.code if e.code is not None else 0,
    }
    if e.error is not None:  # a string when present: the swap specs do not allow null
        data["error"] = e.error
    if e.landed:
        # the platform fee is taken from the input: total = what left the wallet,
        # result = what the route swapped; the output reaches the wallet whole
        fee = e.in_amount * SWAP_FEE_BPS // 10_000
        routed = e.in_amount - fee
        data.update(
            totalInputAmount=str(e.in_amount),
            totalOutputAmount=str(e.out_amount),
            inputAmountResult=str(routed),
            outputAmountResult=str(e.out_amount),
            swapEvents=_swap_events(e, routed, order),
        )
    return 200, data


def _swap_events(e: Execution, routed: int, order: IssuedOrder) -> list[dict[str, Any]]:
    """Two routes (5% / 95%), as the docs' example shows; ``amm`` as the
    program's on-chain swap event names it."""
    first_in, first_out = routed // 20, e.out_amount // 20
    legs = ((first_in, first_out), (routed - first_in, e.out_amount - first_out))
    amms = order.extra.get("amms") or ["", ""]
    return [
        {
            "amm": amms[n],
            "inputMint": e.input_mint,
            "inputAmount": str(a),
            "outputMint": e.output_mint,
            "outputAmount": str(b),
        }
        for n, (a, b) in enumerate(legs)
    ]


def _group_member(state: State, request_id: str, order: IssuedOrder, message: bytes) -> IssuedOrder:
    """The transaction of a request that answered several (Trigger cancelOrders: one
    ``requestId`` for all of them) whose message this is; else `order`."""
    n = 1
    other = state.ledger.get_issued(group_id(request_id, n))
    while other is not None and order.message != message:
        if other.message == message and other.kind == order.kind:
            return other
        n += 1
        other = state.ledger.get_issued(group_id(request_id, n))
    return order


def _is_rfq(order: IssuedOrder) -> bool:
    return order.extra.get("router") == "jupiterz"


def _signed_by_maker(order: IssuedOrder, tx: VersionedTransaction) -> VersionedTransaction:
    """The fill as its market maker sends it: the maker's signature put in slot 0."""
    maker = market_maker(order.request_id).sign_message(txbuild.message_bytes(tx))
    return VersionedTransaction.populate(tx.message, [maker, *tx.signatures[1:]])


def _land(state: State, order: IssuedOrder, signature: str) -> bool:
    """Apply the order's effect on balances and orders; False when short of funds."""
    ledger = state.ledger
    now = state.clock()
    if order.kind in ("recurring", "recurring_price"):
        if not ledger.move(order.owner, (order.input_mint or "", order.in_amount), None):
            return False
        ledger.add_recurring_order(
            RecurringOrder(
                order=order.order or "",
                user=order.owner,
                input_mint=order.input_mint or "",
                output_mint=order.output_mint or "",
                in_amount=order.in_amount,
                number_of_orders=int(order.extra.get("number_of_orders", 0)),
                interval=int(order.extra.get("interval", 0)),
                created_at=now,
                signature=signature,
                start_at=order.extra.get("start_at"),
            )
        )
        return True
    if order.kind == "recurring_cancel":
        r_order = ledger.recurring_orders.get(order.order or "")
        if r_order is None or r_order.status != "active":
            return False
        keeper.cancel_recurring(state, r_order, signature)
        return True
    if order.kind in ("trigger_cancel", "trigger_cancel_batch"):
        # a batch names its orders; a single cancel, its one order
        named = order.extra.get("orders") or [order.order or ""]
        held = [ledger.trigger_orders.get(o) for o in named]
        open_ = [t for t in held if t is not None and t.status == "Open"]
        for closing in open_:
            keeper.cancel_trigger(state, closing, signature)
        return bool(open_)
    return ledger.move(
        order.owner,
        (order.input_mint or "", order.in_amount),
        (order.output_mint or "", order.out_amount),
    )


def _holding(state: State, order: IssuedOrder) -> dict[str, int]:
    """The owner's balances of the swap's two mints (base units)."""
    mints = (order.input_mint or "", order.output_mint or "")
    return {m: state.ledger.balance(order.owner, m) for m in mints}


def _moved(before: dict[str, int], order: IssuedOrder) -> dict[str, int]:
    """The owner's balances after the swap landed: `before` with its input out and its
    output in (from the order, not read again: another landing of the same wallet
    meanwhile is not this one's)."""
    after = dict(before)
    after[order.input_mint or ""] -= order.in_amount
    after[order.output_mint or ""] += order.out_amount
    return after


def _unopened(state: State, order: IssuedOrder) -> tuple[str, ...]:
    """The swap's token mints the owner holds no account of yet (landing opens it)."""
    mints = (order.input_mint or "", order.output_mint or "")
    return tuple(m for m in mints
                 if m != SOL_MINT and not state.ledger.has_account(order.owner, m))  # fmt: skip


def execute(state: State, operation: str, body: bytes) -> EmuResponse:
    data = parse_json_object(body) or {}
    request_id, signed = data.get("requestId"), data.get("signedTransaction")
    if not isinstance(request_id, str) or not request_id:
        return _reject(operation, -4, "Missing request id")
    if not isinstance(signed, str) or not signed:
        return _reject(operation, -5, "Missing signed transaction")
    now = state.clock()
    order = state.ledger.get_issued(request_id)
    if (
        order is None
        or order.kind not in ACCEPTS[operation]
        or (order.extra.get("api") == "swap-v2") != (operation == "execute_swap")
        or now - order.issued_at > state.request_ttl
    ):
        return _reject(operation, -1, NOT_FOUND)
    height_limit = order.extra.get("last_valid_block_height")
    if operation == "execute_swap" and "lastValidBlockHeight" in data:
        given = str(data["lastValidBlockHeight"])
        if given != str(height_limit):
            return _reject(operation, INVALID_HEIGHT, "lastValidBlockHeight is not the order's")
    try:
        tx = txbuild.from_b64(signed)
    except ValueError:
        return _reject(operation, -2, "Invalid signed transaction", "not a transaction")
    order = _group_member(state, request_id, order, txbuild.message_bytes(tx))
    if txbuild.message_bytes(tx) != order.message:
        return _reject(operation, -3, "Invalid message bytes", "transaction was modified")
    rfq = _is_rfq(order)
    if not txbuild.signature_ok(tx, Pubkey.from_string(order.owner), 1 if rfq else 0):
        return _reject(operation, -2, "Invalid signed transaction", "signature does not verify")
    if rfq:
        tx = _signed_by_maker(order, tx)
    signature = str(tx.signatures[0])  # the transaction's id (a fill's: the maker's)
    earlier = state.ledger.execution(signature)
    if earlier is not None:
        return json_response(earlier.answer_status, earlier.answer)
    e = Execution(
        request_id=request_id,
        signature=signature,
        kind=order.kind,
        owner=order.owner,
        at=now,
        slot=0,
        landed=False,
        status="Failed",
        input_mint=order.input_mint,
        output_mint=order.output_mint,
        in_amount=order.in_amount,
        out_amount=order.out_amount,
    )
    if rfq:  # the chain holds it with both signatures and all its keys
        e.signatures = tuple(str(s) for s in tx.signatures)
        e.accounts = tuple(str(k) for k in tx.message.account_keys)
    if order.kind == "swap":  # what the node's getTransaction will say it moved
        e.fee, e.before, e.opened = (
            chain.fee_of(tx),
            _holding(state, order),
            _unopened(state, order),
        )
    kinds = (FaultKind.FAILED, FaultKind.EXPIRED, FaultKind.TIMED_OUT)
    fault = state.faults.take(operation, kinds=kinds, request=request_fields({}, body))
    if rfq:
        expired = now > int(order.extra.get("expire_at", 0))
    elif operation == "execute_swap":
        expired = isinstance(height_limit, int) and state.block_height() > height_limit
    else:
        expired = now - order.issued_at > state.blockhash_ttl
    swap = operation in SWAP_EXECUTES
    if fault is not None and fault.kind == FaultKind.FAILED:
        e.code = int(fault.params.get("code", -1000 if swap else 500))
        e.error = str(fault.params.get("error", "Failed to land"))
        if e.code > 0 and swap:  # program error: landed with err
            e.landed, e.slot = True, state.ledger.next_slot()
    elif rfq and (_blocks(fault) or expired):  # the maker does not send a stale quote
        e.code, e.error = QUOTE_EXPIRED, "Quote expired"
    elif operation == "execute_swap" and (_blocks(fault) or expired):
        e.code, e.error = INVALID_HEIGHT, "Invalid block height: the transaction expired"
    elif _blocks(fault) or expired:
        e.code = -1005 if operation == "execute_ultra" else 500
        e.error = "Transaction expired"
    elif not _land(state, order, signature):
        e.code = -1000 if swap else 400
        e.error = "Insufficient funds for the operation requested."
    else:
        e.status, e.landed, e.slot = "Success", True, state.ledger.next_slot()
        e.code = 0 if operation != "execute_recurring" else None
    if order.kind == "swap" and e.landed:  # what `_land` moved (nothing, if it failed)
        e.after = _moved(e.before, order) if e.status == "Success" else dict(e.before)
    e.answer_status, e.answer = _answer(operation, e, order)
    state.ledger.record(e)
    if fault is not None and fault.kind == FaultKind.TIMED_OUT and swap:
        # landed (or not) as above, but this answer says only that the API stopped
        # waiting: -1006 "timed out", or the fault's `code` (RFQ -2003 "quote expired":
        # the market maker, who signs and sends a JupiterZ fill, sent it after the API
        # gave up on it, jup-ag/rfq-webhook-toolkit README; -2005 "internal error")
        code = int(fault.params.get("code", -1006))
        error = str(fault.params.get("error", "Transaction timed out"))
        timed_out = replace(e, status="Failed", code=code, error=error)
        status, answer = _answer(operation, timed_out, order)
        return json_response(status, answer)
    return json_response(e.answer_status, e.answer)
