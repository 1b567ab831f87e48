"""Wrong tokens, counted per client address: `MAX_FAILURES` within `WINDOW`
seconds lock that address out for `LOCKOUT` seconds (``429`` with
``Retry-After``). A wrong token at ``POST /login`` and a wrong ``Authorization:
Bearer`` both count; a stale cookie does not (a page left open after a restart
would lock itself out). Each failure and each lockout is one log line with the
address, never the token given. A successful sign-in clears the address.

Behind a reverse proxy every client has the proxy's address: a lockout then
locks everyone out for `LOCKOUT` seconds, the safe side (the token itself is
at least 16 characters: guessing was never the way in; the limit keeps the log
and the listener quiet).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

log = structlog.get_logger(__name__)

MAX_FAILURES = 5
WINDOW = 300.0  # seconds
LOCKOUT = 900.0  # seconds
MAX_CLIENTS = 10_000  # addresses remembered (the oldest goes first)


@dataclass
class _Client:
    failures: list[float] = field(default_factory=list)  # when, within the window
    locked_until: float = 0.0


class LoginGuard:
    def __init__(
        self,
        *,
        max_failures: int = MAX_FAILURES,
        window: float = WINDOW,
        lockout: float = LOCKOUT,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.lockout = lockout
        self._monotonic = monotonic
        self._clients: dict[str, _Client] = {}
        self._lock = threading.Lock()

    def locked_for(self, client: str) -> int:
        """Whole seconds `client` stays locked out (0: it may try)."""
        now = self._monotonic()
        with self._lock:
            found = self._clients.get(client)
            if found is None or found.locked_until <= now:
                return 0
            return max(1, math.ceil(found.locked_until - now))

    def failed(self, client: str, via: str) -> int:
        """A wrong token from `client`: logged; the seconds of the lockout it started
        (0: none yet)."""
        now = self._monotonic()
        with self._lock:
            found = self._clients.pop(client, None) or _Client()
            self._clients[client] = found  # now the newest
            if len(self._clients) > MAX_CLIENTS:
                self._clients.pop(next(iter(self._clients)))
            found.failures = [t for t in found.failures if now - t < self.window] + [now]
            count = len(found.failures)
            locked = count >= self.max_failures
            if locked:
                found.failures, found.locked_until = [], now + self.lockout
        log.warning("web_login_failed", client=client, via=via, failures=count,
                    limit=self.max_failures, window=self.window)  # fmt: skip
        if not locked:
            return 0
        seconds = math.ceil(self.lockout)
        log.warning("web_login_locked", client=client, seconds=seconds,
                    failures=count)  # fmt: skip
        return seconds

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)
