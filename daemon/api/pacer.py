"""Keeps our request rate under the limit, shared by every thread of a client.

Slots are handed out at most ``rate`` per second (keyless: 0.5), 1% under it. The API's
``x-ratelimit-remaining``/``x-ratelimit-reset`` headers and 429 answers block
every caller until the reset (or ``Retry-After``). Time comes from the
``clock``/``wall`` seams and waits go through ``sleep``, so tests never sleep.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

MAX_BLOCK = 120.0  # never trust a header into waiting longer than this
# pace 1% under the limit: requests spaced exactly 1/rate apart arrive with jitter,
# and the limit's sliding window then sees one too many now and then (a 429)
HEADROOM = 0.99


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
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.interval = 1.0 / (rate * HEADROOM)
        self._sleep, self._clock, self._wall = sleep, clock, wall
        self._next = float("-inf")
        self._blocked_until = float("-inf")
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for our slot; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next, self._blocked_until)
            self._next = start + self.interval
        wait = start - now
        if wait > 0:
            self._sleep(wait)
        return max(wait, 0.0)

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
