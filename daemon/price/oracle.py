"""On-chain reference prices: Pyth price feed accounts (pull oracle, ``PriceUpdateV2``).

The layout, from Pyth's own SDK (pyth-network/pyth-crosschain,
``target_chains/solana/pyth_solana_receiver_sdk/src/price_update.rs``, and
``pythnet_sdk::messages::PriceFeedMessage``), an Anchor account owned by the
Pyth Solana Receiver ``rec5EKMGg6MxZYaMdyBfgwp4d5rB9T1VQH5pJv5LtFJ``, Borsh,
little-endian::

    [0..8)    discriminator   sha256("account:PriceUpdateV2")[:8]
    [8..40)   write_authority Pubkey
    [40]      verification_level  enum: 0 = Partial {num_signatures: u8}, 1 = Full
    then PriceFeedMessage:
              feed_id [u8; 32], price i64, conf u64, exponent i32,
              publish_time i64 (unix seconds), prev_publish_time i64,
              ema_price i64, ema_conf u64
    then      posted_slot u64
    (the account is allocated at LEN = 134 bytes: the Partial form's size)

The price is ``price * 10^exponent`` (USD per token for the ``X/USD`` feeds),
``conf`` its uncertainty in the same units.

Which accounts: the Pyth price feed program (push oracle,
``pythWSnswVUd12oZpeFP8e9CVaEqJg25g1Vtc2biRsT``) keeps one price feed account
per (shard, feed id): the PDA of seeds ``[shard as u16 LE, feed_id]``. The
defaults below are shard 0 of the sponsored feeds Pyth lists for Solana mainnet
(docs.pyth.network/price-feeds/sponsored-feeds/solana; the docs repository's
``pages/price-feeds/sponsored-feeds/data/svm/solana_mainnet.json``), each
re-derived from its feed id by `feed_account` (a test checks it). A reading is
used only when the account is owned by the receiver, holds the expected feed id,
is the push oracle's account for that feed id, is fully verified, has a positive
price whose confidence interval (``conf``) does not reach zero, has an exponent
within `EXPONENTS`, and is fresh.

Exponents: the message carries ``exponent`` as an i32, so the account alone would
allow 10^-2147483648 .. 10^2147483647; Pyth's feeds use about -12 (sub-cent tokens)
to 0, -8 for most crypto/USD ones such as SOL/USD and USDC/USD (each feed's ``expo``,
as Pyth's Hermes API lists it). `EXPONENTS`, -32..16, is generous both ways and
keeps the price exact and its arithmetic small: an i64 price of 1 .. 2^63-1 is then
a USD value from 10^-32 to about 9.2 * 10^34, never 0 nor beyond ``Decimal``'s range
(an exponent beyond it made `OraclePrice.value` raise ``decimal.Overflow``, or round
to 0 and divide by it). Outside it, the reading is unusable, as a price <= 0 is.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Protocol

from solders.pubkey import Pubkey

from jupcron.mints import SOL_MINT, USDC_MINT, USDT_MINT

RECEIVER_PROGRAM = "rec5EKMGg6MxZYaMdyBfgwp4d5rB9T1VQH5pJv5LtFJ"
PUSH_ORACLE_PROGRAM = "pythWSnswVUd12oZpeFP8e9CVaEqJg25g1Vtc2biRsT"
DISCRIMINATOR = hashlib.sha256(b"account:PriceUpdateV2").digest()[:8]
ACCOUNT_LEN = 8 + 32 + 2 + 32 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 8  # PriceUpdateV2::LEN
SHARDS = range(8)  # shards tried when checking that an account is the push oracle's
EXPONENTS = range(-32, 16 + 1)  # the exponents a reading may have (module docstring)


@dataclass(frozen=True)
class Feed:
    """Where a mint's USD price lives: the price feed account and its feed id (hex)."""

    account: str
    feed_id: str | None = None  # None: the feed id the account holds (still a push-oracle PDA)


# mint -> its X/USD sponsored feed, shard 0 (sources: module docstring)
DEFAULT_FEEDS: dict[str, Feed] = {
    SOL_MINT: Feed(
        "7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE",
        "ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d",
    ),
    USDC_MINT: Feed(
        "Dpw1EAVrSB1ibxiDQyTAW6Zip3J4Btk2x4SgApQCeFbX",
        "eaa020c61cc479712813461ce153894a96a6c00b21ed0cfc2798d1f9a9e9c94a",
    ),
    USDT_MINT: Feed(
        "HT2PLQBcG5EiCcNSaMHAjSgd9F98ecpATbk4Sk5oYuM",
        "2b89b9dc8fdf9f34709a5b106b472f0f39bb6ca9ce04b0fd7f2e971688e2e53b",
    ),
    "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN": Feed(
        "7dbob1psH1iZBS7qPsm3Kwbf5DzSXK8Jyg31CTgTnxH5",
        "0a0408d619e9380abad35060f9192039ed5042fa6f82301d0e48bb52be830996",
    ),
}


@lru_cache(maxsize=256)
def feed_account(feed_id: str, shard: int = 0) -> str:
    """The push oracle's price feed account for a feed id (hex) and shard."""
    seeds = [shard.to_bytes(2, "little"), bytes.fromhex(feed_id)]
    return str(Pubkey.find_program_address(seeds, Pubkey.from_string(PUSH_ORACLE_PROGRAM))[0])


def is_feed_account(account: str, feed_id: str) -> bool:
    return any(feed_account(feed_id, shard) == account for shard in SHARDS)


@dataclass(frozen=True)
class OraclePrice:
    """One decoded ``PriceUpdateV2``."""

    feed_id: str  # hex
    price: int
    conf: int
    exponent: int
    publish_time: int
    full: bool  # verification level Full (else Partial)
    num_signatures: int | None = None  # Partial only
    posted_slot: int = 0
    write_authority: str = ""

    @property
    def value(self) -> Decimal:
        return Decimal(self.price).scaleb(self.exponent)


def decode_price_update(data: bytes) -> OraclePrice:
    """A ``PriceUpdateV2`` account's data (layout: module docstring); ValueError if not one."""
    if len(data) < ACCOUNT_LEN - 1 or data[:8] != DISCRIMINATOR:
        raise ValueError("not a Pyth PriceUpdateV2 account")
    authority = str(Pubkey.from_bytes(data[8:40]))
    level = data[40]
    at = 41
    signatures = None
    if level == 0:
        signatures = data[41]
        at = 42
    elif level != 1:
        raise ValueError(f"unknown verification level {level}")
    if len(data) < at + 92:
        raise ValueError("PriceUpdateV2 account too short")
    feed_id = data[at : at + 32].hex()
    price, conf, exponent, publish_time, _prev, _ema, _ema_conf, slot = struct.unpack_from(
        "<qQiqqqQQ", data, at + 32
    )
    return OraclePrice(feed_id, price, conf, exponent, publish_time, level == 1, signatures,
                       slot, authority)  # fmt: skip


class AccountState(Protocol):
    @property
    def owner(self) -> str: ...
    @property
    def data(self) -> bytes: ...


class AccountReader(Protocol):
    """The part of `jupcron.chain.rpc.SolanaRpc` the oracle uses."""

    def accounts(self, addresses: Sequence[str]) -> Sequence[AccountState | None]: ...


@dataclass(frozen=True)
class Reading:
    """A mint's USD price as read now, or why there is none usable."""

    mint: str
    account: str
    price: OraclePrice | None = None
    problem: str | None = None  # missing, unreadable, not the feed, partial, stale
    stale: bool = False
    age: float | None = None  # seconds since publish_time

    @property
    def usd(self) -> Decimal | None:
        return None if self.problem is not None or self.price is None else self.price.value


def read_prices(
    rpc: AccountReader,
    feeds: Mapping[str, Feed],
    mints: Sequence[str],
    *,
    now: float,
    max_age: float,
) -> dict[str, Reading]:
    """The USD price of each of `mints` that has a feed (one `getMultipleAccounts`);
    `now` in unix seconds. Mints without a feed are left out."""
    wanted = [m for m in dict.fromkeys(mints) if m in feeds]
    if not wanted:
        return {}
    states = rpc.accounts([feeds[m].account for m in wanted])
    return {
        mint: judge(mint, feeds[mint], state, now=now, max_age=max_age)
        for mint, state in zip(wanted, states, strict=True)
    }


def judge(
    mint: str, feed: Feed, state: AccountState | None, *, now: float, max_age: float
) -> Reading:
    """One feed account's state as a `Reading` (every check of the module docstring)."""

    def bad(problem: str, price: OraclePrice | None = None, age: float | None = None) -> Reading:
        text = f"price feed {feed.account}: {problem}"
        return Reading(mint, feed.account, price, text, stale=age is not None, age=age)

    if state is None:
        return bad("no such account")
    if state.owner != RECEIVER_PROGRAM:
        return bad(f"owned by {state.owner}, not the Pyth receiver")
    try:
        price = decode_price_update(bytes(state.data))
    except (ValueError, struct.error) as exc:
        return bad(str(exc))
    if feed.feed_id is not None and price.feed_id != feed.feed_id.lower().removeprefix("0x"):
        return bad(f"holds feed {price.feed_id}, not {feed.feed_id}")
    if not is_feed_account(feed.account, price.feed_id):
        return bad("is not the Pyth price feed program's account for the feed it holds")
    if not price.full:
        return bad(f"only partially verified ({price.num_signatures} signatures)")
    if price.price <= 0:
        return bad(f"price {price.price} is not positive")
    if price.conf >= price.price:
        # Pyth's interval is price +- conf: one that reaches zero says nothing of the
        # price (a halted or disputed market), so no run may be held to it
        return bad(f"confidence {price.conf} is not below the price {price.price}: no price")
    if price.exponent not in EXPONENTS:
        return bad(
            f"exponent {price.exponent} is outside {EXPONENTS.start}..{EXPONENTS.stop - 1}, "
            "the range Pyth's feeds use"
        )
    age = now - price.publish_time
    if age > max_age:
        return bad(f"stale: published {age:.0f} s ago (price.max_age {max_age:g} s)", price, age)
    return Reading(mint, feed.account, price=price, age=age)
