"""A sliding-window request limiter with Jupiter's ``x-ratelimit-*`` headers."""

from __future__ import annotations

import math
import threading
from collections import deque


class SlidingWindow:
    """At most ``rate * window`` requests admitted in any ``window`` seconds.

    As the docs describe the headers (portal/rate-limits.mdx): ``x-ratelimit-current``
    counts every request made in the window, refused ones too, so
    ``x-ratelimit-remaining`` (capacity minus current) is signed: 0 or negative when
    over the limit. ``x-ratelimit-reset`` is when the oldest admitted request ages out
    and a slot frees up; admission counts admitted requests only."""

    def __init__(self, rate: float, window: float = 60.0) -> None:
        self.capacity = max(1, math.floor(rate * window))
        self.window = window
        self._hits: deque[float] = deque()  # admitted
        self._refused: deque[float] = deque()
        self._lock = threading.Lock()

    def hit(self, now: float) -> tuple[bool, dict[str, str]]:
        """Count a request at `now` (unix seconds): (allowed, headers)."""
        with self._lock:
            for times in (self._hits, self._refused):
                while times and times[0] <= now - self.window:
                    times.popleft()
            allowed = len(self._hits) < self.capacity
            (self._hits if allowed else self._refused).append(now)
            current = len(self._hits) + len(self._refused)
            oldest = self._hits[0] if self._hits else now
            headers = {
                "x-ratelimit-remaining": str(self.capacity - current),
                "x-ratelimit-current": str(current),
                "x-ratelimit-reset": str(math.ceil(oldest + self.window)),
            }
            return allowed, headers
