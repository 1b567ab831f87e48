"""A sliding-window request limiter with Jupiter's ``x-ratelimit-*`` headers."""

from __future__ import annotations

import math
import threading
from collections import deque


class SlidingWindow:
    """At most ``rate * window`` requests in any ``window`` seconds."""

    def __init__(self, rate: float, window: float = 60.0) -> None:
        self.capacity = max(1, math.floor(rate * window))
        self.window = window
        self._hits: deque[float] = deque()
        self._lock = threading.Lock()

    def hit(self, now: float) -> tuple[bool, dict[str, str]]:
        """Count a request at `now` (unix seconds): (allowed, headers)."""
        with self._lock:
            while self._hits and self._hits[0] <= now - self.window:
                self._hits.popleft()
            allowed = len(self._hits) < self.capacity
            if allowed:
                self._hits.append(now)
            oldest = self._hits[0] if self._hits else now
            headers = {
                "x-ratelimit-remaining": str(self.capacity - len(self._hits)),
                "x-ratelimit-current": str(len(self._hits)),
                "x-ratelimit-reset": str(math.ceil(oldest + self.window)),
            }
            return allowed, headers
