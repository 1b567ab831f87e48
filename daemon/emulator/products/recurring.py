"""The emulator's Recurring API: ``createOrder`` (time-based, and the deprecated
price-based form), checked and answered as the docs show; the twin of
`jupcron.products.recurring`."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from jupcron.emulator import txbuild
from jupcron.emulator.common import (
    TOKEN_2022_PROGRAM,
    EmuResponse,
    State,
    json_response,
    parse_json_object,
    parse_pubkey,
    token,
    usd_value,
)
from jupcron.emulator.faults import Fault
from jupcron.emulator.orders import issue

MIN_RECURRING_USD = Decimal(100)
MIN_RECURRING_PER_ORDER_USD = Decimal(50)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _recurring_error(message: str, status: int = 400) -> EmuResponse:
    label = "Bad Request" if status == 400 else "Internal Server Error"
    return json_response(status, {"code": status, "error": message, "status": label})


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
