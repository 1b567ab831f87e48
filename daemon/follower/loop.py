"""The follower's thread: a poll at start, then every ``follow.interval`` seconds,
until stopped. Scheduled by the daemon while it is the leader."""

from __future__ import annotations

from collections.abc import Callable
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
    def __init__(
        self,
        engine: Engine,
        api: FollowerApi,
        wallet: str,
        *,
        interval: float,
        clock: Callable[[], datetime],
        rpc: MintRpc | None = None,
        trigger_v2: HistoryApi | None = None,
    ) -> None:
        self.engine, self.api, self.rpc, self.clock = engine, api, rpc, clock
        self.interval = interval
        self.follower = OrderFollower(engine, api, wallet, clock)
        from jupcron.products.trigger_v2.follower import TriggerV2Follower

        self.v2 = None if trigger_v2 is None else TriggerV2Follower(
            engine, trigger_v2, clock, SPARE_WAIT
        )  # fmt: skip
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
            self.follower.poll()
            if self.v2 is not None:
                self.v2.poll()
        except Exception:  # the follower must never take the daemon down
            log.exception("follower_failed")
        self.polls += 1
