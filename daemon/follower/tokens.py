"""Token facts for every mint the plans, runs and followed orders use, and their
USD prices, kept fresh in the store (`jupcron.store.tokens`).

    Jupiter's Tokens V2 ``/search`` (up to 100 mints a call, spare capacity only):
        symbol, name, decimals, token program, ``usdPrice``
    the mint account, with ``rpc.url`` (one ``getMultipleAccounts``):
        decimals (byte 44 of the 82-byte SPL mint layout) and the owner program;
        where both speak, the chain wins (a disagreement is logged)

A mint's facts are fetched once (again after `FACTS_RETRY` while the symbol is
still unknown); prices are read again when older than `PRICE_EVERY`. Symbols come
from the token API with or without ``rpc.url``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Protocol

import structlog
from sqlalchemy import Engine

from jupcron.api.orders import TokenFacts
from jupcron.chain.rpc import DECIMALS_AT, MINT_SIZE, TOKEN_PROGRAMS
from jupcron.errors import JupcronError
from jupcron.price.oracle import AccountState
from jupcron.store import follow, tokens
from jupcron.store.engine import begin

log = structlog.get_logger(__name__)

PRICE_EVERY = timedelta(seconds=60)
FACTS_RETRY = timedelta(hours=1)
BATCH = 100  # mints per /search call (the API's limit)
# what the store keeps of a symbol and a name (``tokens.symbol``, ``tokens.name``): a
# Token-2022 mint's metadata has no limit, and PostgreSQL refuses a longer value
SYMBOL_CHARS = 32
NAME_CHARS = 64
PROGRAM_CHARS = 64  # a token program's address; a longer one is no address at all


class TokenApi(Protocol):
    def token_facts(self, mints: Sequence[str]) -> list[TokenFacts]: ...


class MintRpc(Protocol):
    def accounts(self, addresses: Sequence[str]) -> Sequence[AccountState | None]: ...


def mint_facts(state: AccountState | None) -> tuple[int, str] | None:
    """(decimals, token program) of a mint account; None when it is no mint."""
    if state is None or state.owner not in TOKEN_PROGRAMS or len(state.data) < MINT_SIZE:
        return None
    return int(state.data[DECIMALS_AT]), state.owner


def _stale(at: datetime | None, now: datetime, age: timedelta) -> bool:
    return at is None or now - at >= age


def refresh_tokens(
    engine: Engine, api: TokenApi, rpc: MintRpc | None, clock: Callable[[], datetime]
) -> list[str]:
    """Fetch the facts of every used mint that has none (or no symbol yet), and the
    prices that are due; the mints whose facts were stored."""
    now = clock()
    with begin(engine) as conn:
        used = sorted(follow.plan_mints(conn))
        have = tokens.stored(conn)
    need_facts = [
        m for m in used
        if m not in have
        or (have[m].symbol is None and _stale(have[m].fetched_at, now, FACTS_RETRY))
    ]  # fmt: skip
    need_price = [m for m in used if m not in have or _stale(have[m].priced_at, now, PRICE_EVERY)]
    ask = sorted(set(need_facts) | set(need_price))
    if not ask:
        return []
    listed: dict[str, TokenFacts] = {}
    chain: dict[str, tuple[int, str]] = {}
    try:
        for i in range(0, len(ask), BATCH):
            for fact in api.token_facts(ask[i : i + BATCH]):
                if fact.id in ask:
                    listed[fact.id] = fact
    except JupcronError as exc:
        _failed(engine, clock, "token_api", exc, len(ask))
    if rpc is not None and need_facts:
        try:
            states = rpc.accounts(need_facts)
            for mint, state in zip(need_facts, states, strict=True):
                found = mint_facts(state)
                if found is not None:
                    chain[mint] = found
        except JupcronError as exc:
            _failed(engine, clock, "rpc", exc, len(need_facts))
    stored: list[tokens.Token] = []
    for mint in need_facts:
        merged = _merge(mint, listed.get(mint), chain.get(mint), now)
        if merged is not None:
            stored.append(merged)
    facts_done = {t.mint for t in stored}
    with begin(engine) as conn:
        for token in stored:
            tokens.save(conn, token, now=now)
        for mint in need_price:
            priced = listed.get(mint)
            if mint not in facts_done and priced is not None and priced.usd_price is not None:
                tokens.save_price(conn, mint, priced.usd_price, at=now)
    if stored:
        log.info("token_facts_stored", mints=[t.mint for t in stored])
    return [t.mint for t in stored]


def _merge(
    mint: str, listed: TokenFacts | None, chain: tuple[int, str] | None, now: datetime
) -> tokens.Token | None:
    if listed is None and chain is None:
        return None
    symbol = _clip(listed.symbol, SYMBOL_CHARS) if listed else None
    name = _clip(listed.name, NAME_CHARS) if listed else None
    price = listed.usd_price if listed else None
    if chain is None:
        assert listed is not None
        program = listed.token_program
        program = program if program is None or len(program) <= PROGRAM_CHARS else None
        return tokens.Token(mint, listed.decimals, symbol, "api", name, program,
                            price, now if price is not None else None)  # fmt: skip
    decimals, program = chain
    if listed is not None and (listed.decimals, listed.token_program or program) != chain:
        log.warning("token_facts_disagree", mint=mint, api_decimals=listed.decimals,
                    chain_decimals=decimals, api_program=listed.token_program,
                    chain_program=program)  # fmt: skip
    source = "chain" if listed is None else "api+chain"
    return tokens.Token(mint, decimals, symbol, source, name, program, price,
                        now if price is not None else None)  # fmt: skip


def _clip(text: str | None, size: int) -> str | None:
    """A display text as the store keeps it: at most `size` characters."""
    return text if text is None or len(text) <= size else text[: size - 1] + "…"


def _failed(
    engine: Engine, clock: Callable[[], datetime], where: str, exc: JupcronError, mints: int
) -> None:
    log.warning("token_facts_failed", source=where, error=str(exc), mints=mints)
    with begin(engine) as conn:
        follow.add_event(conn, "token_facts_failed", {"source": where, "error": str(exc)},
                         at=clock())  # fmt: skip
