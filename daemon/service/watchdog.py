"""The systemd watchdog, pinged from the scheduling loop only while it is healthy.

systemd passes ``WATCHDOG_USEC``; we send ``WATCHDOG=1`` every half of it
(`jupcron.service.notify.watchdog_interval`). There is no free-running thread:
the loop calls `Watchdog.tick` on each turn and waits at most
`Watchdog.seconds_until_due`, so a stuck loop (or an unhealthy store) stops
the pings and systemd restarts the service.

    wd = Watchdog(notifier, watchdog_interval(), health=lambda: store_ok and scheduler_ok)
    while not stop:
        wd.tick()
        inbox.wait(wd.seconds_until_due(default=1.0))
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import structlog

from jupcron.logs.outage import Outage

log = structlog.get_logger(__name__)


class WatchdogSink(Protocol):
    """Where pings go (`jupcron.service.notify.Notifier` in the daemon)."""

    def watchdog(self) -> bool: ...


class Watchdog:
    """Sends a ping when one is due and ``health()`` says yes.

    ``interval`` None (no ``WATCHDOG_USEC``) turns it off. ``clock`` is a
    monotonic clock in seconds; tests pass their own or give ``now=``.
    """

    def __init__(
        self,
        sink: WatchdogSink,
        interval: float | None,
        health: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval is not None and interval <= 0:
            raise ValueError("watchdog interval must be positive")
        self.sink = sink
        self.interval = interval
        self.health = health
        self.clock = clock
        self._next_due: float | None = None  # None: due at once
        self._withheld = False  # the last due ping was held back (unhealthy)
        self._outage = Outage(log, "watchdog_withheld", back="watchdog_resumed")
        self.pings = 0

    @property
    def enabled(self) -> bool:
        return self.interval is not None

    def _healthy(self) -> bool:
        if self.health is None:
            return True
        try:
            return bool(self.health())
        except Exception as exc:  # noqa: BLE001 - a broken health check counts as unhealthy
            log.warning("watchdog_health_check_failed", error=repr(exc))
            return False

    def tick(self, now: float | None = None) -> bool:
        """Ping if due and healthy; True when a ping was sent."""
        if self.interval is None:
            return False
        now = self.clock() if now is None else now
        if self._next_due is not None and now < self._next_due:
            return False
        if not self._healthy():
            self._withheld = True
            self._outage.failed(reason="health check failed")
            return False
        self._withheld = False
        self._outage.ok()
        self.sink.watchdog()
        self.pings += 1
        self._next_due = now + self.interval
        return True

    def seconds_until_due(self, now: float | None = None, default: float = 1.0) -> float:
        """How long the loop may sleep before the next `tick` (``default`` when off).

        A ping held back stays due; the loop still waits its usual turn (``default``)
        before it asks the health again, not 0 s: each turn reads the store, and a
        daemon that is unhealthy (the store down) must not spin against it until
        systemd's watchdog ends it."""
        if self.interval is None:
            return default
        turn = default if default > 0 else self.interval
        if self._withheld:
            return min(turn, self.interval)
        if self._next_due is None:
            return 0.0
        now = self.clock() if now is None else now
        return max(0.0, min(self._next_due - now, turn))
