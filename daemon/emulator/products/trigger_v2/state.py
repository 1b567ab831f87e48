"""What the emulator keeps for Trigger V2: login challenges, issued JWTs, one
vault per wallet, the orders (DCA and price) with their events, and the
requests a deposit or a withdrawal was crafted for."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

JWT_TTL = 24 * 3600.0  # documented
CHALLENGE_TTL = 300.0  # documented: 5 minutes


@dataclass
class V2Order:
    id: str
    family: str  # dca | price
    user: str
    vault: str
    input_mint: str
    output_mint: str
    amount: int
    token_account: str  # the vault's per-order input account the deposit funded
    deposit_request_id: str
    deposit_signature: str
    created_at: float
    # its raw state, one of Jupiter's (`jupcron.emulator.products.trigger_v2.api.DISPLAY`):
    # dca: depositing|active|withdrawing|completed|cancelled|deposit_failed; price:
    # depositing|open|ready_to_cancel|expired|cancelled|deposit_failed
    state: str
    events: list[dict[str, Any]] = field(default_factory=list)
    updated_at: float = 0.0
    cancel_request_id: str | None = None
    answer: dict[str, Any] = field(default_factory=dict)  # the create answer (price retries)
    # dca
    order_count: int = 0
    interval: int = 0
    order_type: str = "time_based"
    min_price_usd: float | None = None
    max_price_usd: float | None = None
    trigger_mint: str | None = None
    begin_fill_at: float = 0.0
    rounds_filled: int = 0
    in_used: int = 0
    out_total: int = 0
    # price
    trigger_condition: str | None = None
    trigger_price_usd: float | None = None
    trailing_bps: int | None = None
    slippage_bps: int | None = None
    expires_at_ms: int | None = None

    @property
    def left(self) -> int:
        return self.amount - self.in_used


@dataclass
class V2State:
    jwt_ttl: float = JWT_TTL
    deposit_shape: str = "seeded"  # or "ata": the vault's associated token account
    # the next this many price-order creates answer ``depositConfirmed: false`` (the spec:
    # "whether the deposit has landed and the order is active"): the deposit is never
    # seen landing, the order stays ``depositing`` (shown ``pending``); re-posts answer
    # the same
    unconfirmed: int = 0
    # the next this many creates land the deposit, then answer 400 (the order left
    # ``deposit_failed``, its deposit event failed): a refusal that cannot prove nothing
    # landed
    refused_landed: int = 0
    # the next this many creates or confirm-cancels answer 200 naming a ``txSignature``
    # that is not the signed transaction's, and nothing of that transaction lands (the
    # order left waiting: ``depositing``, shown ``pending``, or still mid-cancel);
    # ``misreported_landed``: it lands as usual, only the answer names another signature
    misreported: int = 0
    misreported_landed: int = 0
    # the next this many confirm-cancels land as usual and answer another order's id
    misnamed: int = 0
    challenges: dict[str, tuple[str, float]] = field(default_factory=dict)  # wallet -> text
    tokens: dict[str, tuple[str, float]] = field(default_factory=dict)  # jwt -> wallet, exp
    vaults: dict[str, str] = field(default_factory=dict)  # wallet -> vault
    orders: dict[str, V2Order] = field(default_factory=dict)
    used_deposits: set[str] = field(default_factory=set)
    secret: bytes = field(default_factory=lambda: os.urandom(32), repr=False)

    def reset(self) -> None:
        self.challenges.clear()
        self.tokens.clear()
        self.vaults.clear()
        self.orders.clear()
        self.used_deposits.clear()

    def active_dca(self, wallet: str) -> int:
        active = ("depositing", "active", "executing", "withdrawing")
        return sum(
            1
            for o in self.orders.values()
            if o.family == "dca" and o.user == wallet and o.state in active
        )

    def summary(self) -> dict[str, Any]:
        return {
            "vaults": dict(self.vaults),
            "orders": [
                {k: v for k, v in vars(o).items() if k != "answer"} for o in self.orders.values()
            ],
            "jwts_issued": len(self.tokens),
        }
