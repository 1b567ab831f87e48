"""The follower's thread: a poll at start, then every ``follow.interval`` seconds,
until stopped. Scheduled by the daemon while it is the leader."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import structlog
from sqlalchemy import Engine

from jupcron.api.client import SPARE_WAIT
from jupcron.follower.orders import ListingApi, OrderFollower
from jupcron.follower.tokens import MintRpc, TokenApi, refresh_tokens
from jupcron.follower.trigger_v2 import HistoryApi, TriggerV2Follower

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
        self.v2 = None if trigger_v2 is None else TriggerV2Follower(
            engine, trigger_v2, clock, SPARE_WAIT
        )  # fmt: skip
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.polls = 0

    def start(self) -> FollowerLoop:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="follower", daemon=True)
        self._thread.start()
        log.info("follower_started", interval=self.interval)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def poll_once(self) -> None:
        try:
            refresh_tokens(self.engine, self.api, self.rpc, self.clock)
            self.follower.poll()
            if self.v2 is not None:
                self.v2.poll()
        except Exception:  # the follower must never take the daemon down
            log.exception("follower_failed")
        self.polls += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(self.interval)
