"""A dependency we keep trying, logged once per streak of failures (`Outage`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class Outage:
    """Something we keep trying that may be down (the store, a health check): its
    failure is logged at the first try of a streak, with `every` again at most once
    every that many seconds (with ``repeats``, the tries failed since the last line,
    and ``lasted``), and with `back` its return once (with ``failures``, the tries it
    took, and ``lasted``): an hour of a failure met every second is some sixty lines,
    not 3,600. Not locked: a caller shared by threads holds its own lock around it."""

    def __init__(
        self,
        logger: Any,
        failed: str,
        back: str | None = None,
        *,
        every: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger  # the caller's, so the lines keep its name
        self._failed = failed
        self._back = back
        self._every = every
        self._monotonic = monotonic
        self.down = False
        self._since = self._said_at = 0.0  # when the streak began, and its last line
        self._repeats = self._failures = 0  # tries failed since that line, and in all

    def failed(self, **fields: Any) -> None:
        """A try failed: a warning `failed` with `fields` if the last one did not (or
        if `every` seconds passed since the last such line)."""
        now = self._monotonic()
        if not self.down:
            self._logger.warning(self._failed, **fields)
            self.down, self._since, self._said_at = True, now, now
            self._repeats, self._failures = 0, 1
            return
        self._repeats += 1
        self._failures += 1
        if self._every is not None and now - self._said_at >= self._every:
            lasted = round(now - self._since)
            self._logger.warning(self._failed, repeats=self._repeats, lasted=lasted, **fields)
            self._said_at, self._repeats = now, 0

    def ok(self) -> None:
        """A try went through: `back` said if the last one had failed."""
        if self.down and self._back is not None:
            lasted = round(self._monotonic() - self._since)
            self._logger.info(self._back, failures=self._failures, lasted=lasted)
        self.down = False
