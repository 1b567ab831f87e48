"""Token facts cached in the store: decimals, symbol, name, token program, and the
last USD price read for the mint (with when).

Where they come from (`jupcron.follower.tokens`): Jupiter's Tokens V2 ``/search``
(symbol, name, decimals, token program, USD price) and, with ``rpc.url``, the mint
account itself (decimals at byte 44, the owner program), which wins where both
speak. `known` adds the few mints every Solana user knows (`KNOWN_MINTS`, source
``builtin``) when the store has no row for them yet, so a report read before the
daemon's first refresh still speaks in tokens.

Human amounts are always derived here from base units with `Decimal`, never floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import cast

from sqlalchemy import Table, select

from jupcron.mints import KNOWN_MINTS
from jupcron.store.models import TokenInfo, TokenPrice
from jupcron.store.runs import Conn

TOKENS = cast(Table, TokenInfo.__table__)
PRICES = cast(Table, TokenPrice.__table__)
SPL_TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"  # noqa: S105 (a program id)


@dataclass(frozen=True)
class Token:
    mint: str
    decimals: int
    symbol: str | None
    source: str  # api | chain | api+chain | builtin
    name: str | None = None
    program: str | None = None  # the mint account's owner: SPL Token or Token-2022
    usd_price: Decimal | None = None
    priced_at: datetime | None = None
    fetched_at: datetime | None = None

    @property
    def label(self) -> str:
        return self.symbol or short(self.mint)

    def human(self, base_units: int) -> Decimal:
        return human(base_units, self.decimals)

    def show(self, base_units: int) -> str:
        """``1.5 USDC``: the amount without trailing zeros, then the label."""
        return f"{plain(self.human(base_units))} {self.label}"


def short(mint: str) -> str:
    return mint[:4] + "…" + mint[-4:] if len(mint) > 10 else mint


def human(base_units: int, decimals: int) -> Decimal:
    """Base units as a token amount: exact (`Decimal`, scaled by 10^-decimals)."""
    return Decimal(base_units).scaleb(-decimals)


def plain(value: Decimal) -> str:
    """Decimal text without exponent or trailing zeros (``0.0333``, ``5``)."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def _price(value: str | None) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        return None


def builtin() -> dict[str, Token]:
    return {
        mint: Token(mint, decimals, symbol, "builtin", program=SPL_TOKEN)
        for mint, (symbol, decimals) in KNOWN_MINTS.items()
    }


def stored(conn: Conn) -> dict[str, Token]:
    """Only the rows of the store."""
    rows = conn.execute(select(TOKENS))
    found = {}
    for r in rows:
        found[r.mint] = Token(r.mint, r.decimals, r.symbol, r.source, r.name, r.token_program,
                              _price(r.usd_price), r.priced_at, r.fetched_at)  # fmt: skip
    return found


def known(conn: Conn) -> dict[str, Token]:
    """The stored facts, with the built-in ones for well-known mints not stored yet."""
    return {**builtin(), **stored(conn)}


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
            "name": token.name,
            "token_program": token.program,
            "usd_price": None if token.usd_price is None else str(token.usd_price),
            "priced_at": token.priced_at,
        },
    )
    if token.usd_price is not None:
        _sample(conn, token.mint, token.usd_price, token.priced_at or now)


def save_price(conn: Conn, mint: str, usd: Decimal, *, at: datetime) -> None:
    """A newer USD price for a stored mint."""
    conn.execute(
        TOKENS.update().where(TOKENS.c.mint == mint).values(usd_price=str(usd), priced_at=at)
    )
    _sample(conn, mint, usd, at)


def _sample(conn: Conn, mint: str, usd: Decimal, at: datetime) -> None:
    """The price into the history (one row a mint and instant; the last read wins)."""
    conn.execute(PRICES.delete().where(PRICES.c.mint == mint, PRICES.c.at == at))
    conn.execute(PRICES.insert(), {"mint": mint, "at": at, "usd_price": str(usd)})


def usd_prices(
    conn: Conn, mint: str, since: datetime, until: datetime
) -> list[tuple[datetime, Decimal]]:
    """The USD prices read for `mint` in [since, until], oldest first (a text that is
    no number left out)."""
    query = (
        select(PRICES.c.at, PRICES.c.usd_price)
        .where(PRICES.c.mint == mint, PRICES.c.at >= since, PRICES.c.at <= until)
        .order_by(PRICES.c.at)
    )
    return [(at, p) for at, text in conn.execute(query) if (p := _price(text)) is not None]
