"""The follower's thread: a poll at start, then every ``follow.interval`` seconds,
until stopped. Scheduled by the daemon while it is the leader."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import structlog
from sqlalchemy import Engine

from jupcron.api.client import SPARE_WAIT
from jupcron.follower.orders import ListingApi, OrderFollower
from jupcron.follower.tokens import MintRpc, TokenApi, refresh_tokens
from jupcron.scheduling.periodic import Periodic

if TYPE_CHECKING:  # the product's follower imports this package's PollResult
    from jupcron.products.trigger_v2.follower import HistoryApi

log = structlog.get_logger(__name__)


class FollowerApi(ListingApi, TokenApi, Protocol):
    """The API calls the follower makes (all on spare capacity)."""


class FollowerLoop:
    """Follows every wallet's orders. `wallet`: the one wallet's address (its session
    `trigger_v2`), or every wallet's address by name (their sessions by name): each
    wallet's runs' orders are read from that wallet's listings."""

    def __init__(
        self,
        engine: Engine,
        api: FollowerApi,
        wallet: str | Mapping[str, str],
        *,
        interval: float,
        clock: Callable[[], datetime],
        rpc: MintRpc | None = None,
        trigger_v2: HistoryApi | Mapping[str, HistoryApi | None] | None = None,
    ) -> None:
        self.engine, self.api, self.rpc, self.clock = engine, api, rpc, clock
        self.interval = interval
        from jupcron.products.trigger_v2.follower import TriggerV2Follower

        self.followers: list[OrderFollower] = []
        self.v2s: list[TriggerV2Follower] = []
        if isinstance(wallet, str):
            self.followers.append(OrderFollower(engine, api, wallet, clock))
            if trigger_v2 is not None and not isinstance(trigger_v2, Mapping):
                self.v2s.append(TriggerV2Follower(engine, trigger_v2, clock, SPARE_WAIT))
        else:
            sessions = trigger_v2 if isinstance(trigger_v2, Mapping) else {}
            for name, address in wallet.items():
                self.followers.append(OrderFollower(engine, api, address, clock, name))
                session = sessions.get(name)
                if session is not None:
                    self.v2s.append(TriggerV2Follower(engine, session, clock, SPARE_WAIT, name))
        self._thread = Periodic("follower", self.poll_once, lambda: self.interval)
        self.polls = 0

    def start(self) -> FollowerLoop:
        self._thread.start()
        log.info("follower_started", interval=self.interval)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._thread.stop(timeout)

    def poll_once(self) -> None:
        try:
            refresh_tokens(self.engine, self.api, self.rpc, self.clock)
            for follower in self.followers:
                follower.poll()
            for v2 in self.v2s:
                v2.poll()
        except Exception:  # the follower must never take the daemon down
            log.exception("follower_failed")
        self.polls += 1
