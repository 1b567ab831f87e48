"""The emulator's Pyth price feeds: one ``PriceUpdateV2`` account per mint it
prices, at the real mainnet address (Pyth's sponsored feed, shard 0), owned by
the Pyth receiver, holding the real feed id, in the account layout of Pyth's
receiver SDK (written here with its own `struct` packing, not with the daemon's
decoder's help).

The price of each mint starts at its `TOKENS` USD price and is republished with
the emulator's clock at every read (a live feed); ``POST /_emulator/oracle``
moves a price, or freezes a feed (its publish time stops: it goes stale) or
back-dates it. Swap quotes follow these prices (`quote_prices`), so a demo swap
is fair against the reference.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from jupcron.emulator.common import TOKENS
from jupcron.price.oracle import DEFAULT_FEEDS, RECEIVER_PROGRAM

EXPONENT = -8
ACCOUNT_LEN = 134  # PriceUpdateV2::LEN
RENT = 1_825_413  # rent-exempt lamports of a 134-byte account (approximate)
_DISCRIMINATOR = hashlib.sha256(b"account:PriceUpdateV2").digest()[:8]
_FULL = 1  # VerificationLevel::Full


def price_update_bytes(feed_id: str, price: int, conf: int, publish_time: int, slot: int) -> bytes:
    """A fully verified ``PriceUpdateV2``: discriminator, write authority, level,
    PriceFeedMessage (feed id, price, conf, exponent, publish time, previous publish
    time, EMA price, EMA conf), posted slot; zero-padded to the account's LEN."""
    data = _DISCRIMINATOR + bytes(32) + bytes([_FULL]) + bytes.fromhex(feed_id)
    data += struct.pack("<q", price) + struct.pack("<Q", conf) + struct.pack("<i", EXPONENT)
    data += struct.pack("<q", publish_time) + struct.pack("<q", publish_time - 1)
    data += struct.pack("<q", price) + struct.pack("<Q", conf) + struct.pack("<Q", slot)
    return data + bytes(ACCOUNT_LEN - len(data))


@dataclass
class OracleState:
    prices: dict[str, Decimal] = field(default_factory=dict)  # mint -> USD (set by control)
    frozen_at: dict[str, float] = field(default_factory=dict)  # mint -> kept publish time

    def reset(self) -> None:
        self.prices.clear()
        self.frozen_at.clear()

    def usd(self, mint: str) -> Decimal | None:
        if mint in self.prices:
            return self.prices[mint]
        known = TOKENS.get(mint)
        return None if known is None else known.usd

    def quote_prices(self) -> dict[str, Decimal]:
        """USD per mint for the swap quotes: the feeds' prices where they are moved."""
        return dict(self.prices)

    def publish_time(self, mint: str, now: float) -> int:
        return int(self.frozen_at.get(mint, now))

    def account(self, address: str, now: float, slot: int) -> dict[str, Any] | None:
        """The feed account at `address`, or None when it is not one of ours."""
        for mint, feed in DEFAULT_FEEDS.items():
            if feed.account != address or feed.feed_id is None:
                continue
            usd = self.usd(mint)
            if usd is None:
                return None
            price = int(usd.scaleb(-EXPONENT))
            conf = max(price // 2000, 1)  # 5 bps
            data = price_update_bytes(feed.feed_id, price, conf, self.publish_time(mint, now), slot)
            return {"lamports": RENT, "owner": RECEIVER_PROGRAM, "data": data}
        return None

    def summary(self, now: float) -> list[dict[str, Any]]:
        out = []
        for mint, feed in DEFAULT_FEEDS.items():
            usd = self.usd(mint)
            if usd is None:
                continue
            out.append({
                "mint": mint, "account": feed.account, "price": str(usd),
                "publishTime": self.publish_time(mint, now), "frozen": mint in self.frozen_at,
            })  # fmt: skip
        return out

    def control(self, data: Any, now: float) -> str | None:
        """Apply ``{mint, price?, freeze?, age?}`` (a list of them too); an error text
        or None. ``mint``: an address or a symbol the emulator knows; ``price`` USD
        (number or decimal text); ``freeze: true`` stops the feed's publish time,
        ``false`` lets it run again; ``age`` back-dates it by that many seconds (frozen)."""
        items = data if isinstance(data, list) else [data]
        changes = []
        for item in items:
            if not isinstance(item, dict):
                return "give {mint, price?, freeze?, age?}"
            mint = _mint(item.get("mint"))
            if mint is None:
                return f"no price feed for mint {item.get('mint')!r}"
            price = item.get("price")
            if price is not None:
                try:
                    price = Decimal(str(price))
                except InvalidOperation:
                    return "price must be a number"
                if not price.is_finite() or price <= 0:
                    return "price must be a positive number"
            age = item.get("age")
            if age is not None and (not isinstance(age, int | float) or age < 0):
                return "age must be seconds >= 0"
            changes.append((mint, price, item.get("freeze"), age))
        for mint, price, freeze, age in changes:
            if price is not None:
                self.prices[mint] = price
            if age is not None:
                self.frozen_at[mint] = now - float(age)
            elif freeze is True:
                self.frozen_at.setdefault(mint, now)
            elif freeze is False:
                self.frozen_at.pop(mint, None)
        return None


def _mint(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    for mint, token in TOKENS.items():
        if value in (mint, token.symbol) and mint in DEFAULT_FEEDS:
            return mint
    return None
