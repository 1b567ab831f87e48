"""Shared pieces of the emulator: its answer type, state, JSON helpers, prices."""

from __future__ import annotations

import json
import random
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from solders.pubkey import Pubkey

from jupcron.emulator.faults import Faults
from jupcron.emulator.ledger import Ledger
from jupcron.emulator.products.trigger_v2.state import V2State

if TYPE_CHECKING:
    from jupcron.emulator.oracle import OracleState


@dataclass
class EmuResponse:
    """What the emulator answers. `drop` = close the connection without an
    answer; `delay` = seconds to wait before answering (slow fault)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False

    def json(self) -> Any:
        return json.loads(self.body)


def json_response(status: int, data: Any, headers: Mapping[str, str] | None = None) -> EmuResponse:
    body = json.dumps(data, separators=(",", ":")).encode()
    merged = {"content-type": "application/json", **(headers or {})}
    return EmuResponse(status=status, body=body, headers=merged)


def text_response(status: int, text: str) -> EmuResponse:
    return EmuResponse(status=status, body=text.encode(), headers={"content-type": "text/plain"})


# a transaction is valid for this many blocks after its blockhash's block (Solana's
# 150): Swap V2's lastValidBlockHeight is the height at issue plus this
VALID_BLOCKS = 150
GENESIS_HEIGHT = 281_000_000  # the emulated chain's block height when the emulator starts


@dataclass
class State:
    """Everything a handler needs; handlers run under `lock`.

    The block height advances with the clock, `VALID_BLOCKS` blocks per
    `blockhash_ttl` seconds (90 s: one block every 0.6 s), so a Swap V2 order's
    ``lastValidBlockHeight`` passes exactly when an Ultra order's blockhash
    expires; ``POST /_emulator/blocks`` moves it further ahead."""

    ledger: Ledger
    faults: Faults
    rng: random.Random
    clock: Callable[[], float]
    blockhash_ttl: float
    request_ttl: float
    lock: threading.RLock = field(default_factory=threading.RLock)
    keeper_speed: float = 1.0  # recurring intervals pass this many times faster
    keeper_offset: float = 0.0  # seconds the keeper runs ahead of the clock
    genesis: float = 0.0  # the clock's reading at GENESIS_HEIGHT
    block_offset: int = 0  # blocks the chain runs ahead of the clock
    v2: V2State = field(default_factory=V2State)  # Trigger V2: logins, vaults, orders
    # portfolio fetchers (platform ids) that fail: their elements left out, their report
    # ``failed`` (a 200 all the same, as the service answers when one source is down)
    failed_fetchers: set[str] = field(default_factory=set)
    oracle: OracleState = field(default_factory=lambda: _oracle())  # Pyth feeds (emulator/oracle)

    def block_height(self) -> int:
        elapsed = max(self.clock() - self.genesis, 0.0)
        return GENESIS_HEIGHT + int(elapsed * VALID_BLOCKS / self.blockhash_ttl) + self.block_offset

    def request_id(self) -> str:
        return str(uuid.UUID(bytes=self.rng.randbytes(16), version=4))

    def pubkey(self) -> Pubkey:
        return Pubkey(self.rng.randbytes(32))


def _oracle() -> OracleState:
    from jupcron.emulator.oracle import OracleState  # it reads TOKENS, defined below

    return OracleState()


def parse_pubkey(value: Any) -> Pubkey | None:
    if not isinstance(value, str):
        return None
    try:
        return Pubkey.from_string(value)
    except ValueError:
        return None


def parse_json_object(body: bytes, *, exact: bool = False) -> dict[str, Any] | None:
    """The body's JSON object; with `exact`, fractional numbers become `Decimal`s."""
    try:
        data = json.loads(body or b"null", parse_float=Decimal if exact else None)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"  # noqa: S105 (a program id)
TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"  # noqa: S105 (a program id)


@dataclass(frozen=True)
class Token:
    symbol: str
    decimals: int
    usd: Decimal
    program: str = TOKEN_PROGRAM  # the mint account's owner (getAccountInfo)
    name: str = ""  # Tokens V2 ``name``


# the mints the emulator knows: their price, and the program that owns the mint
# (Recurring refuses Token-2022 mints, as the API does)
TOKENS: dict[str, Token] = {
    "So11111111111111111111111111111111111111112": Token(
        "SOL", 9, Decimal("150"), name="Wrapped SOL"
    ),
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v": Token("USDC", 6, Decimal("1"), name="USD Coin"),
    "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB": Token("USDT", 6, Decimal("1"), name="USDT"),
    "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN": Token("JUP", 6, Decimal("0.5"), name="Jupiter"),
    "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo": Token(
        "PYUSD", 6, Decimal("1"), TOKEN_2022_PROGRAM, name="PayPal USD"
    ),
    # Wormhole's wrapped BTC: an 8-decimal mint
    "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh": Token(
        "WBTC", 8, Decimal("60000"), name="Wrapped BTC (Portal)"
    ),
}
UNKNOWN_TOKEN = Token("UNKNOWN", 6, Decimal("1"))
SWAP_FEE_BPS = 10


def token(mint: str) -> Token:
    return TOKENS.get(mint, UNKNOWN_TOKEN)


def usd_value(mint: str, amount: int, prices: Mapping[str, Decimal] | None = None) -> Decimal:
    """`amount` base units in USD: at `prices` (the oracle's, where moved), else `TOKENS`."""
    t = token(mint)
    usd = prices.get(mint, t.usd) if prices else t.usd
    return Decimal(amount) / (Decimal(10) ** t.decimals) * usd


def ui_amount(mint: str, amount: int) -> float:
    return float(Decimal(amount) / (Decimal(10) ** token(mint).decimals))


def quote(
    input_mint: str, output_mint: str, amount: int, prices: Mapping[str, Decimal] | None = None
) -> int:
    """Output base units for `amount` input base units, after the swap fee (at `prices`
    where given: the oracle's)."""
    out_usd = prices.get(output_mint, token(output_mint).usd) if prices else token(output_mint).usd
    out = usd_value(input_mint, amount, prices) / out_usd
    raw = out * (Decimal(10) ** token(output_mint).decimals)
    return int(raw * (10_000 - SWAP_FEE_BPS) / 10_000)
