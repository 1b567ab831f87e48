"""Trigger V2 deposits and orders in the emulator (cancels and fills:
`jupcron.emulator.products.trigger_v2.cancel`).

A crafted deposit is remembered like any issued transaction (`IssuedOrder`,
kind ``trigger_v2_deposit``); the create call verifies that the signed bytes
are the ones issued for its ``depositRequestId``, signed by the wallet, lands
them (the wallet's input moves into the vault) and opens the order. The
``depositRequestId`` is single-use: DCA refuses it again (``400 Deposit
transaction not found in cache``); a price order answers the first answer again
with a ``message`` (documented "present on idempotent retries"). Cancel crafts
a withdrawal (kind ``trigger_v2_withdraw``); confirm-cancel lands it (the
vault's remainder back to the wallet). The keeper fills DCA rounds from the
vault, output straight to the wallet, and expires price orders. A price order's
create may answer ``depositConfirmed: false`` with nothing landed
(``V2State.unconfirmed``), as the spec's answer allows; a create may land the
deposit and still answer 400 (``V2State.refused_landed``); a create may answer
200 naming a deposit signature that is not the signed one's, with nothing landed
(``V2State.misreported``) or with it landed (``V2State.misreported_landed``).

Hostile deposits (fault ``hostile`` on ``trigger_v2_deposit``, param
``variant``): ``stranger`` pays a stranger's token account, ``receiver`` also
names the stranger as ``receiverAddress``, ``more`` moves twice the amount into
the vault, ``drain`` adds a transfer of the wallet's lamports. A hostile cancel
withdraws to a stranger.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any

from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from jupcron.emulator import txbuild
from jupcron.emulator.common import (
    EmuResponse,
    State,
    json_response,
    parse_json_object,
    parse_pubkey,
    token,
    usd_value,
)
from jupcron.emulator.faults import Fault
from jupcron.emulator.keeper import iso
from jupcron.emulator.ledger import SOL_MINT, Execution, IssuedOrder
from jupcron.emulator.products.trigger_v2 import tx as txs
from jupcron.emulator.products.trigger_v2.state import V2Order

MIN_USD = Decimal(10)
TOLERANCE = Decimal("0.20")
MAX_ACTIVE_DCA = 10
BEGIN_FILL_MAX = 30 * 86400
STRANGER = Pubkey.from_string("BQ72nSv9f3PRyRKCBnHLVrerrv37CYTHm5h3s9VSGQDV")
CACHE_MISS = "Deposit transaction not found in cache. Please craft a new deposit first."


def _error(status: int, message: str, details: dict[str, str] | None = None) -> EmuResponse:
    data: dict[str, Any] = {"error": message}
    if details:
        data["details"] = details
    return json_response(status, data)


def _invalid(**details: str) -> EmuResponse:
    return _error(400, "Request validation failed", details)


def _digits(value: Any) -> int | None:
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


# --- deposit -----------------------------------------------------------------------


def craft(state: State, wallet: str, body: bytes, hostile: Fault | None) -> EmuResponse:
    data = parse_json_object(body)
    if data is None:
        return _invalid(body="Invalid input: expected object")
    in_mint, out_mint = parse_pubkey(data.get("inputMint")), parse_pubkey(data.get("outputMint"))
    if in_mint is None or out_mint is None:
        return _invalid(inputMint="Invalid input")
    if in_mint == out_mint:
        return _error(400, "Input mint and output mint cannot be the same")
    amount = _digits(data.get("amount"))
    if amount is None:
        return _invalid(amount="Invalid input: expected a string of digits")
    if data.get("userAddress") != wallet:
        return _error(403, "Forbidden: userAddress must match authenticated user")
    vault = state.v2.vaults.get(wallet)
    if vault is None:
        return _error(403, "No vault registered for this user")
    order_type, sub_type = data.get("orderType"), data.get("orderSubType")
    if order_type not in ("price", "dca"):
        return _invalid(orderType='Invalid option: expected one of "price"|"dca"')
    if order_type == "dca" and sub_type is not None:
        return _error(400, "orderSubType must be omitted when orderType is 'dca'")
    if order_type == "price" and sub_type not in ("single", "oco", "otoco"):
        return _invalid(orderSubType="Invalid input")
    if "jlMint" in data:
        return _error(400, "jlMint does not match the JL token for this input mint")
    value = usd_value(str(in_mint), amount)
    if value < MIN_USD:
        return _error(400, f"Order must be at least 10 USD (current value: {value:.2f} USD)")
    request_id = state.request_id()
    variant = str(hostile.params.get("variant", "stranger")) if hostile else None
    owner = STRANGER if variant in ("stranger", "receiver") else Pubkey.from_string(vault)
    moved = amount * 2 if variant == "more" else amount
    shape = "ata" if variant == "stranger" else "seeded"
    if hostile is None and state.v2.deposit_shape in txs.SHAPES:
        shape = state.v2.deposit_shape
    user = Pubkey.from_string(wallet)
    drain = transfer(TransferParams(from_pubkey=user, to_pubkey=STRANGER, lamports=2**63))
    tx, account = txs.deposit(
        user, owner, in_mint, moved, token(str(in_mint)).decimals,
        seed=request_id.replace("-", "")[:32], rng=state.rng, shape=shape,
        extra=[drain] if variant == "drain" else [],
    )  # fmt: skip
    state.ledger.balance(wallet, SOL_MINT)
    state.ledger.issue(
        IssuedOrder(
            request_id=request_id, kind="trigger_v2_deposit", owner=wallet,
            message=txbuild.message_bytes(tx), issued_at=state.clock(),
            input_mint=str(in_mint), output_mint=str(out_mint), in_amount=amount,
            hostile=hostile is not None,
            extra={"vault": vault, "account": str(account), "order_type": order_type,
                   "sub_type": sub_type},
        )
    )  # fmt: skip
    answer = {
        "transaction": txbuild.to_b64(tx), "requestId": request_id,
        "receiverAddress": str(STRANGER) if variant == "receiver" else vault,
        "mint": str(in_mint), "amount": str(amount),
        "tokenDecimals": token(str(in_mint)).decimals, "inputTokenAccount": str(account),
    }  # fmt: skip
    return json_response(200, answer)


# --- create ------------------------------------------------------------------------


def _dca_fields(data: dict[str, Any], state: State) -> dict[str, Any] | EmuResponse:
    count, interval = data.get("orderCount"), data.get("intervalSeconds")
    if not isinstance(count, int) or isinstance(count, bool):
        return _invalid(orderCount="Invalid input: expected number")
    if count < 2:
        return _invalid(orderCount="Too small: expected number to be >=2")
    if not isinstance(interval, int) or isinstance(interval, bool):
        return _invalid(intervalSeconds="Invalid input: expected number")
    if interval < 60:
        return _invalid(intervalSeconds="Too small: expected number to be >=60")
    if interval > 31_536_000:
        return _invalid(intervalSeconds="Too big: expected number to be <=31536000")
    kind = data.get("orderType", "time_based")
    low, high = _number(data.get("minPriceUsd")), _number(data.get("maxPriceUsd"))
    trigger = data.get("triggerMint")
    if kind not in ("time_based", "price_conditional"):
        return _invalid(orderType="Invalid input")
    if kind == "time_based" and (low is not None or high is not None):
        return _invalid(orderType="Time-based orders cannot set minPriceUsd or maxPriceUsd")
    if kind == "price_conditional":
        problems = {}
        if low is None and high is None:
            problems["orderType"] = (
                "Price-conditional orders must have at least minPriceUsd or maxPriceUsd set"
            )
        if trigger is None:
            problems["triggerMint"] = "Price-conditional orders must specify a triggerMint"
        if problems:
            return _invalid(**problems)
        if trigger not in (data.get("inputMint"), data.get("outputMint")):
            return _invalid(triggerMint="triggerMint must be the input or output mint")
        if token(str(trigger)).symbol in ("USDC", "USDT"):
            return _error(400, "Trigger mint is not supported")
    begin = state.clock()
    if data.get("beginFillAt") is not None:
        try:
            moment = datetime.fromisoformat(str(data["beginFillAt"]).replace("Z", "+00:00"))
            begin_at = moment.timestamp()
        except ValueError:
            return _invalid(beginFillAt="Invalid ISO-8601 datetime")
        if begin_at <= state.clock():
            return _error(400, "Begin fill time must be in the future")
        if begin_at > state.clock() + BEGIN_FILL_MAX:
            return _error(400, "Begin fill time cannot be more than 30 days in the future")
        begin = begin_at
    return {"order_count": count, "interval": interval, "order_type": kind,
            "min_price_usd": low, "max_price_usd": high,
            "trigger_mint": trigger if kind == "price_conditional" else None,
            "begin_fill_at": begin}  # fmt: skip


def _price_fields(data: dict[str, Any], state: State) -> dict[str, Any] | EmuResponse:
    if data.get("orderType") != "single":
        return _invalid(orderType="only single orders are served by the emulator")
    condition = data.get("triggerCondition")
    if condition not in ("above", "below") or parse_pubkey(data.get("triggerMint")) is None:
        return _invalid(triggerCondition="Invalid input")
    price, trailing = _number(data.get("triggerPriceUsd")), data.get("trailingBps")
    if (price is None) == (trailing is None):
        return _error(400, "exactly one of triggerPriceUsd or trailingBps must be set")
    if trailing is not None and (not isinstance(trailing, int) or not 50 <= trailing <= 9000):
        return _invalid(trailingBps="Too small or too big: expected number between 50 and 9000")
    slippage = data.get("slippageBps")
    if slippage is not None and (not isinstance(slippage, int) or not 0 <= slippage <= 10_000):
        return _invalid(slippageBps="Invalid input")
    expires = data.get("expiresAt")
    if not isinstance(expires, int) or isinstance(expires, bool):
        return _invalid(expiresAt="Required")
    if expires <= int(state.clock() * 1000):
        return _invalid(expiresAt="expiresAt must be in the future")
    return {"trigger_mint": data["triggerMint"], "trigger_condition": condition,
            "trigger_price_usd": price, "trailing_bps": trailing, "slippage_bps": slippage,
            "expires_at_ms": expires}  # fmt: skip


def create(state: State, wallet: str, family: str, body: bytes) -> EmuResponse:
    data = parse_json_object(body)
    if data is None:
        return _invalid(body="Invalid input: expected object")
    missing = [k for k in ("depositRequestId", "depositSignedTx", "userPubkey", "inputMint",
                           "outputMint", "inputAmount") if not data.get(k)]  # fmt: skip
    if missing:
        return _invalid(**dict.fromkeys(missing, "Required"))
    if data["userPubkey"] != wallet:
        return _error(403, "Forbidden: userPubkey must match authenticated user")
    amount = _digits(data.get("inputAmount"))
    if amount is None:
        return _invalid(inputAmount="Invalid input: expected a string of digits")
    fields = _dca_fields(data, state) if family == "dca" else _price_fields(data, state)
    if isinstance(fields, EmuResponse):
        return fields
    if family == "dca":
        per_round = usd_value(str(data["inputMint"]), amount) / fields["order_count"]
        if per_round < MIN_USD - TOLERANCE:
            return _error(400, f"Each order must be at least 10 USD (current value: "
                               f"{per_round:.2f} USD)")  # fmt: skip
        if state.v2.active_dca(wallet) >= MAX_ACTIVE_DCA:
            return _error(400, "Maximum of 10 active DCA orders allowed per user")
    request_id = str(data["depositRequestId"])
    issued = state.ledger.get_issued(request_id)
    if issued is None or issued.kind != "trigger_v2_deposit" or issued.owner != wallet:
        return _error(400, CACHE_MISS)
    if request_id in state.v2.used_deposits:
        again = next((o for o in state.v2.orders.values()
                      if o.deposit_request_id == request_id), None)  # fmt: skip
        if family == "price" and again is not None and again.family == "price":
            return json_response(
                200, {**again.answer, "message": "Order already created for this deposit"}
            )
        return _error(400, CACHE_MISS)
    wanted = "dca" if family == "dca" else "price"
    if issued.extra.get("order_type") != wanted:
        return _error(400, f"The deposit was crafted for orderType {issued.extra['order_type']}")
    if data["inputMint"] != issued.input_mint or amount != issued.in_amount:
        return _error(400, "inputMint and inputAmount must match the deposit")
    signature = _verified(str(data["depositSignedTx"]), issued)
    if isinstance(signature, EmuResponse):
        return signature
    state.v2.used_deposits.add(request_id)
    if state.clock() - issued.issued_at > state.blockhash_ttl:
        return _error(400, "Deposit transaction failed to land: blockhash expired")
    return _land_deposit(state, wallet, family, issued, signature, data, fields)


def _verified(signed: str, issued: IssuedOrder) -> str | EmuResponse:
    try:
        tx = txbuild.from_b64(signed)
    except ValueError:
        return _error(400, "Invalid transaction format")
    if txbuild.message_bytes(tx) != issued.message:
        return _error(400, "Invalid signed transaction: the message was modified")
    if not txbuild.fee_payer_signature_ok(tx, Pubkey.from_string(issued.owner)):
        return _error(400, "Invalid signed transaction: the signature does not verify")
    return str(tx.signatures[0])


def _execution(state: State, issued: IssuedOrder, signature: str, amount: int) -> None:
    state.ledger.record(
        Execution(
            request_id=issued.request_id, signature=signature, kind=issued.kind,
            owner=issued.owner, at=state.clock(), slot=state.ledger.next_slot(), landed=True,
            status="Success", input_mint=issued.input_mint, output_mint=issued.output_mint,
            in_amount=amount, code=0,
        )
    )  # fmt: skip


def _new_order(
    state: State,
    wallet: str,
    family: str,
    issued: IssuedOrder,
    signature: str,
    data: dict[str, Any],
    fields: dict[str, Any],
    order_state: str,
) -> V2Order:
    """The order a create makes, in `order_state`, with no events yet."""
    now = state.clock()
    return V2Order(
        id=state.request_id(), family=family, user=wallet, vault=str(issued.extra["vault"]),
        input_mint=issued.input_mint or "", output_mint=str(data["outputMint"]),
        amount=issued.in_amount, token_account=str(issued.extra["account"]),
        deposit_request_id=issued.request_id, deposit_signature=signature, created_at=now,
        updated_at=now, state=order_state, **fields,
    )  # fmt: skip


def _deposited(
    state: State, order: V2Order, named: str, event_state: str, confirmed: bool
) -> dict[str, Any]:
    """The order's deposit event (naming the signature `named`) and the create's answer,
    each in its family's shape; the event is the order's, and returned."""
    now = state.clock()
    event: dict[str, Any] = {"type": "deposit", "txSignature": named, "state": event_state}
    if order.family == "dca":
        event.update(timestamp=iso(now), inputAmount=str(order.amount))
        order.answer = {"id": order.id, "txSignature": named}
    else:
        event.update(timestamp=int(now * 1000), mint=order.input_mint, amount=str(order.amount))
        order.answer = {"id": order.id, "txSignature": named, "depositConfirmed": confirmed}
    order.events.append(event)
    state.v2.orders[order.id] = order
    return event


def _land_deposit(
    state: State,
    wallet: str,
    family: str,
    issued: IssuedOrder,
    signature: str,
    data: dict[str, Any],
    fields: dict[str, Any],
) -> EmuResponse:
    ledger, mint, amount = state.ledger, issued.input_mint or "", issued.in_amount
    vault = str(issued.extra["vault"])
    made = partial(_new_order, state, wallet, family, issued, signature, data, fields)
    if family == "price" and state.v2.unconfirmed > 0:
        # sent, never seen landing (``V2State.unconfirmed``): nothing moves, the order
        # stays ``depositing`` (shown ``pending``: "Deposit transaction submitted,
        # awaiting confirmation"), and the answer says ``depositConfirmed: false``
        state.v2.unconfirmed -= 1
        order = made("depositing")
        _deposited(state, order, signature, "pending", confirmed=False)
        return json_response(200, order.answer)
    if state.v2.misreported > 0:
        # a 200 naming a deposit signature that is not the signed transaction's
        # (``V2State.misreported``): nothing lands, the order waits (raw ``depositing``,
        # shown ``pending``, in both families) with a pending deposit event of the
        # signature named, and the answer says it is live. Re-posts answer the same
        # (price) or the used ``depositRequestId``'s 400 (DCA)
        state.v2.misreported -= 1
        order = made("depositing")
        _deposited(state, order, txs.random_signature(state.rng), "pending", confirmed=True)
        return json_response(200, order.answer)
    if not ledger.move(wallet, (mint, amount), None):
        return _error(400, "Deposit transaction failed: insufficient funds")
    ledger.move(vault, None, (mint, amount))
    _execution(state, issued, signature, amount)
    order = made("active" if family == "dca" else "open")
    event = _deposited(state, order, signature, "success", confirmed=True)
    if state.v2.misreported_landed > 0:  # landed, but the answer names another signature
        state.v2.misreported_landed -= 1
        order.answer["txSignature"] = txs.random_signature(state.rng)
    if state.v2.refused_landed > 0:  # landed, but the API took it as failed
        state.v2.refused_landed -= 1
        order.state = "deposit_failed"  # shown ``failed``, in both families
        event["state"] = "failed"
        return _error(400, "Deposit transaction failed to confirm")
    return json_response(200, order.answer)
