"""Token facts for the mints the plans use: decimals from the mint account when
``rpc.url`` is set, else decimals and symbol from Jupiter's token API (spare
capacity only). Fetched once per mint, then read from the store."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

import structlog
from sqlalchemy import Engine

from daemon.api.orders import TokenFacts
from daemon.errors import JupcronError
from daemon.store import follow, tokens
from daemon.store.engine import begin

log = structlog.get_logger(__name__)


class TokenApi(Protocol):
    def token_facts(self, mints: Sequence[str]) -> list[TokenFacts]: ...


class MintRpc(Protocol):
    def mint_decimals(self, mint: str) -> int | None: ...


def refresh_tokens(
    engine: Engine, api: TokenApi, rpc: MintRpc | None, clock: Callable[[], datetime]
) -> list[str]:
    """Fetch the facts of every used mint not in the store yet; the mints stored."""
    with begin(engine) as conn:
        missing = sorted(follow.plan_mints(conn) - set(tokens.known(conn)))
    if not missing:
        return []
    found: list[tokens.Token] = []
    try:
        if rpc is not None:
            for mint in missing:
                decimals = rpc.mint_decimals(mint)
                if decimals is not None:
                    found.append(tokens.Token(mint, decimals, None, "chain"))
        else:
            for i in range(0, len(missing), 100):
                for fact in api.token_facts(missing[i : i + 100]):
                    if fact.id in missing:
                        found.append(tokens.Token(fact.id, fact.decimals, fact.symbol, "api"))
    except JupcronError as exc:
        log.warning("token_facts_failed", error=str(exc), mints=len(missing))
        with begin(engine) as conn:
            follow.add_event(conn, "token_facts_failed", {"error": str(exc)}, at=clock())
    now = clock()
    with begin(engine) as conn:
        for token in found:
            tokens.save(conn, token, now=now)
    if found:
        log.info("token_facts_stored", mints=[t.mint for t in found])
    return [t.mint for t in found]
