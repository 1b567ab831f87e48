"""The config's sections about what may be signed: the guard's limits (`GuardConfig`),
the reference price (`PriceConfig`), and the stops and budgets (`SafetyConfig`: dry
run, kill switch, caps, balance check)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from solders.pubkey import Pubkey

from jupcron.config.fields import Section
from jupcron.plans.fields import Mint, mint_address
from jupcron.plans.fields import Pubkey as Address  # a program's too

# DESIGN §4 / API.md: the programs a Jupiter transaction may call.
DEFAULT_PROGRAMS: dict[str, str] = {
    "DCA265Vj8a9CEuX1eb1LWRnDT7uK6q1xMipnNyatn23M": "Jupiter DCA (Recurring)",
    "VALaaymxQh2mNy2trH9jUqHT1mTow76wpTcGmSWSwJe": "Jupiter Value Average (Recurring, price)",
    "j1o2qRpjcyUwEvwtcfhEQefh773ZgjxcVRry7LDqg5X": "Jupiter Limit Order v2 (Trigger)",
    "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4": "Jupiter Aggregator v6",
    "61DFfeTKM7trxYcPQCM78bJ794ddZprZpAwAnLiwTpYH": "Jupiter Order Engine (JupiterZ RFQ)",
    "ComputeBudget111111111111111111111111111111": "Compute Budget",
    "11111111111111111111111111111111": "System",
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA": "SPL Token",
    "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb": "Token-2022",
    "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL": "Associated Token Account",
    "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr": "Memo",
}


class GuardConfig(Section):
    allowed_programs: list[Address] = Field(default_factory=lambda: list(DEFAULT_PROGRAMS))
    extra_programs: list[Address] = Field(default_factory=list)
    max_priority_fee_lamports: Annotated[int, Field(ge=0)] = 10_000_000  # 0.01 SOL
    # the whole fee (5,000 lamports a signature plus the priority fee), as the runtime
    # computes it; applies when our wallet pays it
    max_fee_lamports: Annotated[int, Field(ge=0)] = 10_000_000  # 0.01 SOL
    allow_gasless: bool = False
    # with rpc.url set: simulate every transaction before signing and refuse any loss
    # beyond the order (see docs/txguard.md); off only to save RPC calls, never for safety
    simulate: bool = True
    # what a recurring order's escrow accounts may cost in rent (returned on close)
    order_rent_allowance_lamports: Annotated[int, Field(ge=0, le=100_000_000)] = 10_000_000
    # how far a Jupiter instruction's input may exceed the plan's amount (basis points);
    # Jupiter's own fees come out of the plan's amount, so 0 is right for its APIs
    amount_allowance_bps: Annotated[int, Field(ge=0, le=100)] = 0
    # a swap plan without its own slippageBps: the most slippage a route may allow
    max_slippage_bps: Annotated[int, Field(ge=0, le=5_000)] = 300
    # the most platform fee a route may take when the plan names no referral: Jupiter's
    # own fee is 0-10 bps on listed pairs (50 on tokens younger than a day)
    max_platform_fee_bps: Annotated[int, Field(ge=0, le=255)] = 20
    # with rpc.url and an oracle feed for both mints: refuse a transaction whose guaranteed
    # minimum out is more than this many bps below what the reference price implies
    # (docs/price-protection.md)
    max_price_deviation_bps: Annotated[int, Field(ge=0, le=10_000)] = 300


class PriceConfig(Section):
    """The reference price (docs/price-protection.md): Pyth price feed accounts read
    through ``rpc.url``."""

    # mint -> Pyth price feed account (PriceUpdateV2) of its USD price; added to (or
    # replacing) the built-in feeds of SOL, USDC, USDT and JUP (daemon/price/oracle.py)
    feeds: dict[str, str] = Field(default_factory=dict)
    # a reference older than this (seconds since its publish time) is stale; Pyth's
    # sponsored feeds on Solana update at least every 60 s
    max_age: Annotated[float, Field(gt=0, le=86_400)] = 120.0
    # a feed configured for a mint but stale, missing or unreadable: refuse to sign, or
    # sign without the reference check and record a warning event
    on_stale: Literal["refuse", "warn"] = "refuse"

    @field_validator("feeds")
    @classmethod
    def _keys(cls, value: dict[str, str]) -> dict[str, str]:
        for mint, account in value.items():
            try:
                mint_address(mint)  # a symbol or a mistyped mint would never be priced
            except ValueError as exc:
                raise ValueError(f"mint {exc}") from None
            try:
                Pubkey.from_string(account)
            except ValueError:
                raise ValueError(f"feed account '{account}' is not a base58 public key") from None
        return value


class CapConfig(Section):
    # the input mint's address, matched exactly (a symbol is refused, with the address)
    mint: Mint
    per_day: Annotated[int, Field(gt=0)] | None = None
    per_week: Annotated[int, Field(gt=0)] | None = None
    # unset: every wallet has this budget of its own; a wallet's name: that wallet's only
    wallet: str | None = None

    @model_validator(mode="after")
    def _limits_something(self) -> CapConfig:
        if self.per_day is None and self.per_week is None:
            raise ValueError(
                f"a cap on {self.mint} sets neither per_day nor per_week: it would limit "
                "nothing (set one or both, in base units of the mint)"
            )
        return self


class SafetyConfig(Section):
    dry_run: bool = False
    kill_switch_file: Path | None = None
    kill_switch: bool = False
    caps: list[CapConfig] = Field(default_factory=list)
    balance_check: bool = False
