"""Trigger V2 in the emulator: login (challenge, verify, JWT with expiry), the
vault, history, and the routes' table (docs/products.md has the facts).

Error shapes as documented: the Trigger API's own errors are ``{"error": ...}``
(validation adds ``details``); the gateway's (API key, 429) stay as they are
for every product (`jupcron.emulator.core`). Every authenticated route wants
``Authorization: Bearer <jwt>``: missing, unknown, expired → ``401
{"error": "Unauthorized"}``. Order creation, cancel and confirm-cancel live in
`jupcron.emulator.products.trigger_v2.orders`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from typing import Any

from solders.pubkey import Pubkey
from solders.signature import Signature

from jupcron.emulator.common import (
    EmuResponse,
    State,
    json_response,
    parse_json_object,
    parse_pubkey,
)
from jupcron.emulator.faults import Fault
from jupcron.emulator.keeper import iso
from jupcron.emulator.ledger import SOL_MINT
from jupcron.emulator.products.trigger_v2 import cancel as cancels
from jupcron.emulator.products.trigger_v2 import orders as orders
from jupcron.emulator.products.trigger_v2 import tx as txs
from jupcron.emulator.products.trigger_v2.state import CHALLENGE_TTL, V2Order

PREFIX = "Sign this message to authenticate with Jupiter Trigger Order API: "
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

ROUTES: dict[tuple[str, str], str] = {
    ("POST", "/auth/challenge"): "trigger_v2_challenge",
    ("POST", "/auth/verify"): "trigger_v2_verify",
    ("GET", "/vault"): "trigger_v2_vault",
    ("GET", "/vault/register"): "trigger_v2_register_vault",
    ("POST", "/deposit/craft"): "trigger_v2_deposit",
    ("POST", "/orders/dca"): "trigger_v2_create_dca",
    ("POST", "/orders/price"): "trigger_v2_create_price",
    ("GET", "/orders/history/dca"): "trigger_v2_history_dca",
    ("GET", "/orders/history"): "trigger_v2_history_price",
}
PATTERNS = (
    ("POST", re.compile(r"/orders/(dca|price)/cancel/([^/]+)"), "trigger_v2_cancel"),
    (
        "POST",
        re.compile(r"/orders/(dca|price)/confirm-cancel/([^/]+)"),
        "trigger_v2_confirm_cancel",
    ),
    ("GET", re.compile(r"/orders/history/dca/([^/]+)"), "trigger_v2_dca_order"),
)
OPEN_ROUTES = frozenset({"trigger_v2_challenge", "trigger_v2_verify"})
# Each raw state's display state, as Jupiter maps them: a price order's ``rawState`` to
# its ``orderState`` (trigger/order-history.mdx, "Raw States"), a DCA's ``state`` to its
# ``displayState`` (trigger/dca-history.mdx, "Order states"). Nothing else is served: a
# state not in its family's table is a bug of the emulator (`display` raises).
PRICE_DISPLAY: dict[str, str] = {
    "pending_deposit": "pending", "depositing": "pending", "open": "open",
    "ready_execute": "executing", "ready_expire": "executing", "executing": "executing",
    "execute_success": "executing", "execute_failed": "executing",
    "ready_withdraw_output": "executing", "withdrawing": "executing",
    "partial_fill_success": "executing", "fill_success": "filled",
    "ready_to_cancel": "pending_withdraw", "cancelled": "cancelled",
    "oco_cancelled": "cancelled", "expired": "expired", "deposit_failed": "failed",
    "withdraw_failed": "failed", "fill_failed": "failed",
}  # fmt: skip
DCA_DISPLAY: dict[str, str] = {
    "depositing": "pending", "active": "active", "executing": "executing",
    "withdrawing": "pending_withdraw", "completed": "completed", "cancelled": "cancelled",
    "deposit_failed": "failed",
}  # fmt: skip
DISPLAY: dict[str, dict[str, str]] = {"price": PRICE_DISPLAY, "dca": DCA_DISPLAY}
# the history's ``state=active`` list: the orders shown pending, open, executing or
# mid-cancel; ``past``, the rest (filled or completed, cancelled, expired, failed)
ACTIVE_DISPLAY = frozenset({"pending", "open", "active", "executing", "pending_withdraw"})


def display(o: V2Order) -> str:
    """The order's display state; KeyError for a raw state its family's table lacks."""
    return DISPLAY[o.family][o.state]


def route(method: str, tail: str) -> str | None:
    found = ROUTES.get((method, tail))
    if found:
        return found
    for verb, pattern, operation in PATTERNS:
        if verb == method and pattern.fullmatch(tail):
            return operation
    return None


def error(status: int, message: str, details: Mapping[str, str] | None = None) -> EmuResponse:
    data: dict[str, Any] = {"error": message}
    if details:
        data["details"] = dict(details)
    return json_response(status, data)


def invalid(**details: str) -> EmuResponse:
    return error(400, "Request validation failed", details)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b58(raw: bytes) -> str:
    number, out = int.from_bytes(raw, "big"), ""
    while number:
        number, rest = divmod(number, 58)
        out = _B58[rest] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\x00"))) + out


def issue_jwt(state: State, wallet: str) -> str:
    """A real HS256 JWT for `wallet`, valid `jwt_ttl` seconds (24 h by default)."""
    v2, now = state.v2, state.clock()
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": wallet, "iat": int(now), "exp": int(now + v2.jwt_ttl),
              "jti": state.rng.randbytes(8).hex()}  # fmt: skip
    payload = _b64url(json.dumps(claims).encode())
    signed = f"{header}.{payload}"
    mac = hmac.new(v2.secret, signed.encode(), hashlib.sha256).digest()
    token = f"{signed}.{_b64url(mac)}"
    v2.tokens[token] = (wallet, now + v2.jwt_ttl)
    return token


def authenticated(state: State, headers: Mapping[str, str]) -> str | None:
    """The wallet the request's JWT belongs to, if it is one we issued and alive."""
    given = headers.get("authorization", "")
    if not given.lower().startswith("bearer "):
        return None
    token = given[7:].strip()
    held = state.v2.tokens.get(token)
    if held is None or state.clock() >= held[1]:
        return None
    return held[0]


def dispatch(
    state: State,
    operation: str,
    tail: str,
    query: Mapping[str, str],
    headers: Mapping[str, str],
    body: bytes,
    hostile: Fault | None,
    jwt_revoked: bool = False,
) -> EmuResponse:
    if operation == "trigger_v2_challenge":
        return challenge(state, body, hostile)
    if operation == "trigger_v2_verify":
        return verify(state, body)
    wallet = authenticated(state, headers)
    if wallet is None or jwt_revoked:
        return error(401, "Unauthorized")
    if operation == "trigger_v2_vault":
        return vault(state, wallet)
    if operation == "trigger_v2_register_vault":
        return register(state, wallet)
    if operation == "trigger_v2_deposit":
        return orders.craft(state, wallet, body, hostile)
    if operation in ("trigger_v2_create_dca", "trigger_v2_create_price"):
        return orders.create(state, wallet, operation.rsplit("_", 1)[1], body)
    if operation in ("trigger_v2_cancel", "trigger_v2_confirm_cancel"):
        family, order_id = tail.split("/")[2], tail.split("/")[-1]
        if operation == "trigger_v2_cancel":
            return cancels.cancel(state, wallet, family, order_id, hostile)
        return cancels.confirm_cancel(state, wallet, family, order_id, body)
    if operation == "trigger_v2_dca_order":
        found = state.v2.orders.get(tail.rsplit("/", 1)[1])
        if found is None or found.family != "dca" or found.user != wallet:
            return error(404, "DCA order not found or you do not own it")
        return json_response(200, dca_item(found))
    return history(state, wallet, "dca" if operation.endswith("dca") else "price", query)


# --- login -------------------------------------------------------------------------


def challenge(state: State, body: bytes, hostile: Fault | None) -> EmuResponse:
    data = parse_json_object(body)
    wallet = parse_pubkey((data or {}).get("walletPubkey"))
    kind = (data or {}).get("type")
    if wallet is None:
        return invalid(walletPubkey="Invalid input")
    if kind not in ("message", "transaction"):
        return invalid(type='Invalid option: expected one of "message"|"transaction"')
    if hostile is not None:
        return _hostile_challenge(state, wallet, str(hostile.params.get("variant", "disguised")))
    text = PREFIX + _b64url(state.rng.randbytes(18))
    state.v2.challenges[str(wallet)] = (text, state.clock())
    if kind == "transaction":  # for hardware wallets: the text in a memo, never submitted
        memo = txs.memo_transaction(wallet, text, state.rng)
        return json_response(200, {"type": "transaction", "transaction": memo})
    return json_response(200, {"type": "message", "challenge": text})


def _hostile_challenge(state: State, wallet: Pubkey, variant: str) -> EmuResponse:
    """Challenges a signer must refuse: a transaction, or one disguised as a message."""
    drain = base64.b64encode(bytes(txs.login_drain(wallet, state.rng))).decode("ascii")
    if variant == "transaction":
        return json_response(200, {"type": "transaction", "transaction": drain})
    if variant == "prefixed":
        text = PREFIX + _b58(txs.fee_only_message(wallet, state.rng))
    elif variant == "foreign":
        text = "jup.example.net wants you to sign in with your Solana account:\n" + str(wallet)
    else:  # disguised: the drain's bytes as the "message"
        text = drain
    state.v2.challenges[str(wallet)] = (text, state.clock())
    return json_response(200, {"type": "message", "challenge": text})


def verify(state: State, body: bytes) -> EmuResponse:
    data = parse_json_object(body) or {}
    wallet = parse_pubkey(data.get("walletPubkey"))
    if wallet is None or data.get("type") not in ("message", "transaction"):
        return invalid(walletPubkey="Invalid input")
    held = state.v2.challenges.get(str(wallet))
    if held is None or state.clock() - held[1] > CHALLENGE_TTL:
        return error(400, "Challenge not found or expired")
    text = held[0]
    if data["type"] == "message":
        try:
            signature = Signature.from_string(str(data.get("signature")))
        except ValueError:
            return invalid(signature="Invalid input")
        if not signature.verify(wallet, text.encode("utf-8")):
            return error(401, "Invalid signature")
    elif not txs.memo_signed(str(data.get("signedTransaction")), wallet, text):
        return error(401, "Invalid signature")
    del state.v2.challenges[str(wallet)]
    return json_response(200, {"token": issue_jwt(state, str(wallet))})


# --- the vault ---------------------------------------------------------------------


def _vault_answer(state: State, wallet: str) -> dict[str, Any]:
    vault = state.v2.vaults[wallet]
    privy = hashlib.sha256(vault.encode()).hexdigest()[:32]
    return {"userPubkey": wallet, "vaultPubkey": vault, "privyVaultId": privy}


def vault(state: State, wallet: str) -> EmuResponse:
    if wallet not in state.v2.vaults:
        return error(404, "Vault not found")
    return json_response(200, _vault_answer(state, wallet))


def register(state: State, wallet: str) -> EmuResponse:
    if wallet in state.v2.vaults:
        details = {"vaultPubkey": state.v2.vaults[wallet]}
        return error(409, "Vault already registered", details)
    address = str(state.pubkey())
    ledger = state.ledger
    ledger.balance(address, SOL_MINT)  # a custodial account: it starts empty
    for mint in ledger.holdings(address):
        ledger.set_balance(address, mint, 0)
    state.v2.vaults[wallet] = address
    return json_response(201, _vault_answer(state, wallet))


# --- history -----------------------------------------------------------------------


def dca_item(o: V2Order) -> dict[str, Any]:
    per_round = o.amount // max(o.order_count, 1)
    return {
        "id": o.id, "requestId": o.deposit_request_id, "userPubkey": o.user,
        "vaultPubkey": o.vault, "inputMint": o.input_mint, "outputMint": o.output_mint,
        "inputAmountInitial": str(o.amount), "inputAmountRemaining": str(o.left),
        "amountPerRound": str(per_round), "outputAmountTotal": str(o.out_total),
        "inputAmountUsed": str(o.in_used), "orderType": o.order_type,
        "minPriceUsd": o.min_price_usd, "maxPriceUsd": o.max_price_usd,
        "triggerMint": o.trigger_mint,
        "retryWindowSeconds": min(max(30, o.interval // 2), 7200), "jlEnabled": False,
        "jlYieldUsd": None, "numberOfRounds": o.order_count, "intervalSeconds": o.interval,
        "beginFillAt": iso(o.begin_fill_at),
        "nextFillAt": iso(o.begin_fill_at + o.rounds_filled * o.interval),
        "lastFillAt": next((e["timestamp"] for e in reversed(o.events) if e["type"] == "fill"),
                           None),
        "roundsFilled": o.rounds_filled, "fillPercent": o.rounds_filled / max(o.order_count, 1),
        "state": o.state, "displayState": display(o),
        "createdAt": iso(o.created_at), "updatedAt": iso(o.updated_at or o.created_at),
        "events": list(reversed(o.events)),
    }  # fmt: skip


def price_item(o: V2Order) -> dict[str, Any]:
    filled = o.in_used
    return {
        "id": o.id, "orderType": "single", "orderState": display(o),
        "rawState": o.state, "userPubkey": o.user, "privyWalletPubkey": o.vault,
        "inputMint": o.input_mint, "initialInputAmount": str(o.amount),
        "remainingInputAmount": str(o.amount - filled), "outputMint": o.output_mint,
        "triggerMint": o.trigger_mint, "triggerCondition": o.trigger_condition,
        "triggerPriceUsd": o.trigger_price_usd, "slippageBps": o.slippage_bps,
        "trailingBps": o.trailing_bps, "expiresAt": o.expires_at_ms,
        "createdAt": int(o.created_at * 1000),
        "updatedAt": int((o.updated_at or o.created_at) * 1000),
        "outputAmount": str(o.out_total) if filled else None,
        "inputUsed": str(filled) if filled else None,
        "fillPercent": filled / o.amount if filled else None,
        "events": list(reversed(o.events)),
    }  # fmt: skip


def history(state: State, wallet: str, family: str, query: Mapping[str, str]) -> EmuResponse:
    which = query.get("state")
    if which not in (None, "active", "past"):
        return invalid(state='Invalid option: expected one of "active"|"past"')
    limit_text, offset_text = query.get("limit", "20"), query.get("offset", "0")
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= 100:
        return invalid(limit="Too big or too small: expected number to be >=1 and <=100")
    if not offset_text.isdigit():
        return invalid(offset="Invalid input")
    mine = [o for o in state.v2.orders.values() if o.user == wallet and o.family == family]
    if which is not None:
        mine = [o for o in mine if (display(o) in ACTIVE_DISPLAY) == (which == "active")]
    mine.sort(key=lambda o: (o.created_at, o.id), reverse=True)
    limit, offset = int(limit_text), int(offset_text)
    page = mine[offset : offset + limit]
    item = dca_item if family == "dca" else price_item
    return json_response(
        200,
        {"orders": [item(o) for o in page],
         "pagination": {"total": len(mine), "limit": limit, "offset": offset}},
    )  # fmt: skip
