"""Keeps our request rate under the limit, shared by every thread of a client.

Slots are handed out at most ``rate`` per second (keyless: 0.5), 1% under it. The API's
``x-ratelimit-remaining``/``x-ratelimit-reset`` headers and 429 answers block
every caller until the reset (or ``Retry-After``). Time comes from the
``clock``/``wall`` seams and waits go through ``sleep``, so tests never sleep.

Fires first: `acquire` is for runs. Background work (the order follower)
asks with `acquire_spare`, which takes a slot only when it is free right now,
no run is waiting for one, and the background's own share (``spare_share`` of
the rate) has room; otherwise it waits, and gives up at its deadline. A run
that arrives just after a spare slot was taken waits at most one interval.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

MAX_BLOCK = 120.0  # never trust a header into waiting longer than this
# pace 1% under the limit: requests spaced exactly 1/rate apart arrive with jitter,
# and the limit's sliding window then sees one too many now and then (a 429)
HEADROOM = 0.99
SPARE_SHARE = 0.25  # at most this part of the rate goes to background work


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.strip())
    except ValueError:
        return None


class Pacer:
    def __init__(
        self,
        rate: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        spare_share: float = SPARE_SHARE,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        if not 0 < spare_share <= 1:
            raise ValueError("spare_share must be in (0, 1]")
        self.rate = rate
        self.interval = 1.0 / (rate * HEADROOM)
        self._sleep, self._clock, self._wall = sleep, clock, wall
        self._next = float("-inf")
        self._blocked_until = float("-inf")
        self._lock = threading.Lock()
        self.spare_interval = self.interval / spare_share
        self._next_spare = float("-inf")
        self._waiting = 0  # runs sleeping until their slot

    def acquire(self) -> float:
        """Wait for our slot; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next, self._blocked_until)
            self._next = start + self.interval
            wait = start - now
            if wait > 0:
                self._waiting += 1
        if wait > 0:
            try:
                self._sleep(wait)
            finally:
                with self._lock:
                    self._waiting -= 1
        return max(wait, 0.0)

    def try_spare(self) -> bool:
        """Take a slot for background work if one is free now and no run waits."""
        with self._lock:
            now = self._clock()
            free_at = max(self._next, self._blocked_until, self._next_spare)
            if self._waiting or now < free_at:
                return False
            self._next = now + self.interval
            self._next_spare = now + self.spare_interval
            return True

    def acquire_spare(self, timeout: float) -> float | None:
        """Wait (up to `timeout` seconds) for a spare slot; the seconds waited, or
        ``None`` when there was none in time."""
        waited = 0.0
        while not self.try_spare():
            if waited >= timeout:
                return None
            with self._lock:
                free_at = max(self._next, self._blocked_until, self._next_spare)
                step = min(max(free_at - self._clock(), 0.0) + self.interval / 4, timeout)
            self._sleep(step)
            waited += step
        return waited

    def block_for(self, seconds: float) -> None:
        """Nobody sends for `seconds` from now (429, exhausted window)."""
        seconds = min(max(seconds, 0.0), MAX_BLOCK)
        with self._lock:
            self._blocked_until = max(self._blocked_until, self._clock() + seconds)

    def reset_in(self, headers: Mapping[str, str]) -> float | None:
        """Seconds until ``x-ratelimit-reset`` (unix seconds), if sent."""
        reset = _number(headers.get("x-ratelimit-reset"))
        return None if reset is None else max(reset - self._wall(), 0.0)

    def observe(self, headers: Mapping[str, str]) -> None:
        """Adapt to the rate-limit headers of an answer."""
        remaining = _number(headers.get("x-ratelimit-remaining"))
        if remaining is not None and remaining <= 0:
            wait = self.reset_in(headers)
            if wait is not None:
                self.block_for(wait)


@dataclass(frozen=True)
class Buckets:
    """The pacer of each rate bucket: `main`, and operations with a bucket of their own."""

    main: Pacer
    own: Mapping[str, Pacer] = field(default_factory=dict)

    def for_operation(self, operation: str) -> Pacer:
        return self.own.get(operation, self.main)
