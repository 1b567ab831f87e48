"""What the products' order calls share (`issue`: build, remember and return an
unsigned transaction; the API's error envelope) and the portfolio call, answered
from the ledger. Each product's own calls are in `jupcron.emulator.products`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from jupcron.emulator import txbuild
from jupcron.emulator.common import (
    EmuResponse,
    State,
    json_response,
    parse_pubkey,
    token,
    ui_amount,
    usd_value,
)
from jupcron.emulator.faults import Fault, FaultKind
from jupcron.emulator.ledger import SOL_MINT, IssuedOrder

GAS_RESERVE_LAMPORTS = 10_000_000  # 0.01 SOL


def envelope(message: str, status: int = 400, cause: str | None = None) -> EmuResponse:
    data: dict[str, Any] = {"error": message, "code": status}
    if cause:
        data["cause"] = cause
    return json_response(status, data)


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


def _token_asset(mint: str, amount: int) -> dict[str, Any] | None:
    """A token asset as the spec's ``PortfolioAssetToken`` (None when nothing is held)."""
    if amount <= 0:
        return None
    data = {"address": mint, "amount": ui_amount(mint, amount), "price": float(token(mint).usd)}
    value = float(usd_value(mint, amount))
    return {"type": "token", "networkId": "solana", "value": value, "attributes": {}, "data": data}


def _order_element(
    label: str, input_mint: str, output_mint: str, in_amount: int, left: int, created_at: float,
    expire_at: float | None = None, **more: Any,
) -> dict[str, Any]:  # fmt: skip
    """An open order's portfolio element (a DCA's or a limit order's: `more` holds
    what only that kind shows), as the spec's ``PortfolioElementTrade``: its
    ``assets`` an object, ``input`` what it still holds to sell (`left`), ``output``
    null (the emulator's fills pay the wallet at once, nothing waits to be withdrawn);
    ``expireAt`` only when the order has one. Worth what it holds."""
    data = {
        "assets": {"input": _token_asset(input_mint, left), "output": None},
        "inputAddress": input_mint,
        "outputAddress": output_mint,
        "initialInputAmount": ui_amount(input_mint, in_amount),
        "withdrawnOutputAmount": 0,
        "inputPrice": float(token(input_mint).usd),
        "outputPrice": float(token(output_mint).usd),
        "filledPercentage": float(1 - left / in_amount) if in_amount else 0,
        "createdAt": int(created_at * 1000),
        **({} if expire_at is None else {"expireAt": int(expire_at * 1000)}),
        **more,
    }
    return _trade("jupiter-exchange", label, float(usd_value(input_mint, left)), data)


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
        if r.user != address or r.status != "active":
            continue
        mints.update((r.input_mint, r.output_mint))
        recurring = {"cycles": r.number_of_orders, "interval": r.interval * 1000}
        elements.append(_order_element("DCA", r.input_mint, r.output_mint, r.in_amount,
                                       r.in_amount - r.in_used, r.created_at,
                                       withdrawnOutputAmount=ui_amount(r.output_mint,
                                                                       r.out_received),
                                       recurring=recurring))  # fmt: skip
    for t_order in ledger.trigger_orders.values():
        if t_order.maker != address or t_order.status != "Open":
            continue
        mints.update((t_order.input_mint, t_order.output_mint))
        expected = ui_amount(t_order.output_mint, t_order.taking_amount)
        elements.append(_order_element(
            "LimitOrder", t_order.input_mint, t_order.output_mint, t_order.making_amount,
            t_order.left, t_order.created_at, t_order.expired_at,
            expectedOutputAmount=expected,
        ))  # fmt: skip
    wanted = [p for p in query.get("platforms", "").split(",") if p]
    if wanted:
        elements = [e for e in elements if e["platformId"] in wanted]
    platforms = wanted or sorted({e["platformId"] for e in elements} | state.failed_fetchers)
    elements = [e for e in elements if e["platformId"] not in state.failed_fetchers]
    reports = [
        {"id": p, "status": "failed", "duration": 3, "error": "fetcher timed out"}
        if p in state.failed_fetchers
        else {"id": p, "status": "succeeded", "duration": 3}
        for p in platforms
    ]
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
            "fetcherReports": reports,
            "elements": elements,
            "duration": 9,
            "tokenInfo": {"solana": info},
        },
    )
