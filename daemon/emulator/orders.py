"""The order-creating calls (recurring createOrder, trigger cancelOrder; the swap
orders are in `jupcron.emulator.swaps`) and the portfolio call, answered from
and recorded in the ledger."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.emulator import txbuild
from jupcron.emulator.common import (
    TOKEN_2022_PROGRAM,
    EmuResponse,
    State,
    json_response,
    parse_json_object,
    parse_pubkey,
    token,
    ui_amount,
    usd_value,
)
from jupcron.emulator.faults import Fault, FaultKind
from jupcron.emulator.ledger import SOL_MINT, IssuedOrder

MIN_RECURRING_USD = Decimal(100)
MIN_RECURRING_PER_ORDER_USD = Decimal(50)
GAS_RESERVE_LAMPORTS = 10_000_000  # 0.01 SOL


def _recurring_error(message: str, status: int = 400) -> EmuResponse:
    label = "Bad Request" if status == 400 else "Internal Server Error"
    return json_response(status, {"code": status, "error": message, "status": label})


def _envelope(message: str, status: int = 400, cause: str | None = None) -> EmuResponse:
    data: dict[str, Any] = {"error": message, "code": status}
    if cause:
        data["cause"] = cause
    return json_response(status, data)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


HIDDEN_DRAIN_MINT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"  # USDT


def _hostile(state: State, fault: Fault | None, owner: Pubkey) -> dict[str, Any]:
    if fault is None:
        return {}
    if fault.kind == FaultKind.HIDDEN_DRAIN:
        mint = Pubkey.from_string(str(fault.params.get("mint", HIDDEN_DRAIN_MINT)))
        return {"hidden_accounts": [get_associated_token_address(owner, mint)]}
    if "receiver" in fault.params:  # a swap whose output goes to a stranger's account
        return {"receiver": parse_pubkey(fault.params["receiver"]) or state.pubkey()}
    to = parse_pubkey(fault.params.get("to")) or state.pubkey()
    return {"hostile_to": to, "hostile_lamports": int(fault.params.get("lamports", 0))}


def issue(state: State, kind: str, owner: Pubkey, fault: Fault | None, **details: Any) -> str:
    """Build the unsigned transaction, remember it, return it as base64."""
    cu_price = details.pop("compute_unit_price", txbuild.DEFAULT_CU_PRICE)
    state.ledger.balance(str(owner), SOL_MINT)  # a wallet it issues to is one it knows
    shape = details.pop("shape", {})
    tx = txbuild.build_unsigned(
        kind,
        owner,
        rng=state.rng,
        input_mint=details.get("input_mint"),
        output_mint=details.get("output_mint"),
        amount=details.get("in_amount", 0),
        out_amount=details.get("out_amount"),
        order=parse_pubkey(details.get("order")),
        compute_unit_price=cu_price,
        lookup_tables=state.ledger.lookup_tables,
        **shape,
        **_hostile(state, fault, owner),
    )
    if fault is not None and fault.kind == FaultKind.HIDDEN_DRAIN:
        details.setdefault("extra", {})["hidden_drain"] = str(
            fault.params.get("mint", HIDDEN_DRAIN_MINT)
        )
    issued = IssuedOrder(
        request_id=details.pop("request_id"),
        kind=kind,
        owner=str(owner),
        message=txbuild.message_bytes(tx),
        issued_at=state.clock(),
        hostile=fault is not None,
        **details,
    )
    state.ledger.issue(issued)
    return txbuild.to_b64(tx)


def _price_bound(params: Mapping[str, Any], key: str) -> tuple[bool, str | None]:
    """(ok, exact text) of an optional minPrice/maxPrice: a JSON number, or null."""
    value = params.get(key)
    if value is None:
        return True, None
    if isinstance(value, bool) or not isinstance(value, int | Decimal) or value <= 0:
        return False, None
    return True, str(value)


def _cycle_bounds(
    in_mint: str, out_mint: str, per_cycle: int, bounds: Mapping[str, str]
) -> dict[str, int]:
    """The DCA's per-cycle output bounds for a plan's price bounds, a price being the
    input paid per unit of the output: at most ``maxPrice`` a unit means at least
    per_cycle / maxPrice out (``min_out_amount``); at least ``minPrice``, at most
    per_cycle / minPrice (``max_out_amount``). The API does not document its units;
    this is the emulator's reading, kept consistent with the bounds it was asked for."""
    scale = Decimal(10) ** (token(out_mint).decimals - token(in_mint).decimals)
    out: dict[str, int] = {}
    if "maxPrice" in bounds:
        out["min_out_amount"] = int(Decimal(per_cycle) * scale / Decimal(bounds["maxPrice"]))
    if "minPrice" in bounds:
        out["max_out_amount"] = int(Decimal(per_cycle) * scale / Decimal(bounds["minPrice"]))
    return out


def create_recurring(state: State, body: bytes, hostile: Fault | None) -> EmuResponse:
    data = parse_json_object(body, exact=True)  # prices as sent, digit for digit
    if data is None:
        return _recurring_error("Invalid request body")
    user = parse_pubkey(data.get("user"))
    if user is None:
        return _recurring_error("Invalid user pubkey")
    in_mint, out_mint = str(data.get("inputMint")), str(data.get("outputMint"))
    if parse_pubkey(in_mint) is None or parse_pubkey(out_mint) is None or in_mint == out_mint:
        return _recurring_error("Invalid inputMint or outputMint")
    for mint in (in_mint, out_mint):
        if token(mint).program == TOKEN_2022_PROGRAM:
            return _recurring_error(f"Token-2022 mints are not supported: {mint}")
    params = data.get("params")
    if not isinstance(params, dict) or len(params) != 1 or not {"time", "price"} & set(params):
        return _recurring_error("params must hold exactly one of 'time' or 'price'")
    extra: dict[str, Any] = {}
    if "time" in params:
        p = params["time"] if isinstance(params["time"], dict) else {}
        amount, orders, interval = (
            _int(p.get(k)) for k in ("inAmount", "numberOfOrders", "interval")
        )
        if amount is None or orders is None or interval is None or interval == 0:
            return _recurring_error("params.time needs integer inAmount, numberOfOrders, interval")
        if orders < 2:
            return _recurring_error("numberOfOrders must be at least 2")
        bounds: dict[str, str] = {}
        for key in ("minPrice", "maxPrice"):
            ok, text = _price_bound(p, key)
            if not ok:
                return _recurring_error(f"params.time.{key} must be a positive number or null")
            if text is not None:
                bounds[key] = text
        value = usd_value(in_mint, amount)
        if value < MIN_RECURRING_USD:
            return _recurring_error(f"Order is valued at {value:.2f} USDC, minimum is 100.00 USDC")
        if value / orders < MIN_RECURRING_PER_ORDER_USD:
            return _recurring_error(
                f"Each order is valued at {value / orders:.2f} USDC, minimum is 50.00 USDC"
            )
        kind = "recurring"
        start_at = _int(p.get("startAt"))
        extra = {
            "number_of_orders": orders, "interval": interval, "start_at": start_at, **bounds,
        }  # fmt: skip
        idx = state.rng.getrandbits(64)  # the DCA's application index
        order = str(txbuild.dca_address(user, in_mint, out_mint, idx))
        shape = {
            "cycles": orders,
            "interval": interval,
            "application_idx": idx,
            "start_at": start_at,
            **_cycle_bounds(in_mint, out_mint, amount // orders, bounds),
        }
    else:
        p = params["price"] if isinstance(params["price"], dict) else {}
        amount = _int(p.get("depositAmount"))
        if (
            amount is None
            or _int(p.get("incrementUsdcValue")) is None
            or not _int(p.get("interval"))
        ):
            return _recurring_error(
                "params.price needs integer depositAmount, incrementUsdcValue, interval"
            )
        kind = "recurring_price"
        extra = {"number_of_orders": 0, "interval": p["interval"]}
        order, shape = str(state.pubkey()), {}
    request_id = state.request_id()
    tx = issue(
        state,
        kind,
        user,
        hostile,
        request_id=request_id,
        input_mint=in_mint,
        output_mint=out_mint,
        in_amount=amount,
        order=order,
        extra=extra,
        shape=shape,
    )
    return json_response(200, {"requestId": request_id, "transaction": tx})


def cancel_trigger(state: State, body: bytes, hostile: Fault | None) -> EmuResponse:
    data = parse_json_object(body)
    if data is None:
        return _envelope("invalid cancel order request")
    maker = parse_pubkey(data.get("maker"))
    if maker is None:
        return _envelope("invalid maker pubkey")
    cu = data.get("computeUnitPrice", "auto")
    if cu == "auto":
        cu_price = txbuild.DEFAULT_CU_PRICE
    elif isinstance(cu, str) and cu.isdigit():
        cu_price = int(cu)
    else:
        return _envelope("invalid cancel order request", cause="computeUnitPrice")
    order = state.ledger.open_trigger_order(str(data.get("order")), str(maker))
    if order is None:
        return _envelope("no matching orders found")
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


def _trade(platform: str, label: str, value: float, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "networkId": "solana",
        "platformId": platform,
        "type": "trade",
        "label": label,
        "name": label,
        "value": value,
        "data": data,
    }


def positions(state: State, address: str, query: Mapping[str, str]) -> EmuResponse:
    if parse_pubkey(address) is None:
        return json_response(400, {"error": "Invalid address"})
    ledger = state.ledger
    now_ms = int(state.clock() * 1000)
    elements: list[dict[str, Any]] = []
    mints: set[str] = set()
    assets: list[dict[str, Any]] = []
    for mint, amount in ledger.holdings(address).items():
        mints.add(mint)
        t = token(mint)
        value = float(usd_value(mint, amount))
        assets.append(
            {
                "type": "token",
                "networkId": "solana",
                "value": value,
                "attributes": {},
                "data": {"address": mint, "amount": ui_amount(mint, amount), "price": float(t.usd)},
            }
        )
    if assets:
        total = sum(float(a["value"]) for a in assets)
        elements.append(
            {
                "networkId": "solana",
                "platformId": "wallet-tokens",
                "type": "multiple",
                "label": "Wallet",
                "name": "Wallet",
                "value": total,
                "data": {"assets": assets},
            }
        )
    for r in ledger.recurring_orders.values():
        if r.user != address:
            continue
        mints.update((r.input_mint, r.output_mint))
        data = {
            "inputAddress": r.input_mint,
            "outputAddress": r.output_mint,
            "initialInputAmount": ui_amount(r.input_mint, r.in_amount),
            "withdrawnOutputAmount": 0,
            "inputPrice": float(token(r.input_mint).usd),
            "outputPrice": float(token(r.output_mint).usd),
            "filledPercentage": 0,
            "createdAt": int(r.created_at * 1000),
            "expireAt": None,
            "recurring": {"cycles": r.number_of_orders, "interval": r.interval * 1000},
        }
        value = float(usd_value(r.input_mint, r.in_amount))
        elements.append(_trade("jupiter-exchange", "DCA", value, data))
    for t_order in ledger.trigger_orders.values():
        if t_order.maker != address or t_order.status != "Open":
            continue
        mints.update((t_order.input_mint, t_order.output_mint))
        data = {
            "inputAddress": t_order.input_mint,
            "outputAddress": t_order.output_mint,
            "initialInputAmount": ui_amount(t_order.input_mint, t_order.making_amount),
            "withdrawnOutputAmount": 0,
            "expectedOutputAmount": ui_amount(t_order.output_mint, t_order.taking_amount),
            "inputPrice": float(token(t_order.input_mint).usd),
            "outputPrice": float(token(t_order.output_mint).usd),
            "filledPercentage": 0,
            "createdAt": int(t_order.created_at * 1000),
            "expireAt": None,
        }
        value = float(usd_value(t_order.input_mint, t_order.making_amount))
        elements.append(_trade("jupiter-exchange", "LimitOrder", value, data))
    wanted = [p for p in query.get("platforms", "").split(",") if p]
    if wanted:
        elements = [e for e in elements if e["platformId"] in wanted]
    platforms = wanted or sorted({e["platformId"] for e in elements})
    info = {
        m: {"address": m, "name": token(m).symbol, "symbol": token(m).symbol}
        | {"decimals": token(m).decimals}
        for m in sorted(mints)
    }
    return json_response(
        200,
        {
            "date": now_ms,
            "owner": address,
            "fetcherReports": [{"id": p, "status": "succeeded", "duration": 3} for p in platforms],
            "elements": elements,
            "duration": 9,
            "tokenInfo": {"solana": info},
        },
    )
