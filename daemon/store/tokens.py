"""Token facts cached in the store: decimals, and a symbol where known.

Human amounts are always derived here from base units with `Decimal`, never floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import cast

from sqlalchemy import Table, select

from daemon.store.models import TokenInfo
from daemon.store.runs import Conn

TOKENS = cast(Table, TokenInfo.__table__)


@dataclass(frozen=True)
class Token:
    mint: str
    decimals: int
    symbol: str | None
    source: str  # chain | api

    @property
    def label(self) -> str:
        return self.symbol or short(self.mint)

    def human(self, base_units: int) -> Decimal:
        return human(base_units, self.decimals)


def short(mint: str) -> str:
    return mint[:4] + "…" + mint[-4:] if len(mint) > 10 else mint


def human(base_units: int, decimals: int) -> Decimal:
    """Base units as a token amount: exact (`Decimal`, scaled by 10^-decimals)."""
    return Decimal(base_units).scaleb(-decimals)


def known(conn: Conn) -> dict[str, Token]:
    rows = conn.execute(select(TOKENS.c.mint, TOKENS.c.decimals, TOKENS.c.symbol, TOKENS.c.source))
    return {r.mint: Token(r.mint, r.decimals, r.symbol, r.source) for r in rows}


def save(conn: Conn, token: Token, *, now: datetime) -> None:
    """Insert or replace the facts of one mint."""
    conn.execute(TOKENS.delete().where(TOKENS.c.mint == token.mint))
    conn.execute(
        TOKENS.insert(),
        {
            "mint": token.mint,
            "decimals": token.decimals,
            "symbol": token.symbol,
            "source": token.source,
            "fetched_at": now,
        },
    )
