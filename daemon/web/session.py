"""The status page's sign-ins, kept by the server (``POST /login`` starts one,
``POST /logout`` ends it).

A session is a random value (256 bits) in the browser's cookie; the server keeps
only its SHA-256 and when it ends (``web.session_max_age`` after the sign-in), so
a sign-out, an expiry or a new token (`end_all`) ends it here, whatever the
browser still holds. Sessions live in this process: a restart ends them all.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable

MAX_SESSIONS = 1000  # the oldest goes first: a flood of sign-ins cannot fill the memory


def _key(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()


class Sessions:
    def __init__(self, max_age: float, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.max_age = max_age
        self._monotonic = monotonic
        self._ends: dict[str, float] = {}  # sha256 of the cookie value -> when it ends
        self._lock = threading.Lock()

    def start(self) -> str:
        """A new session: the value for the browser's cookie."""
        value = secrets.token_urlsafe(32)
        with self._lock:
            if len(self._ends) >= MAX_SESSIONS:
                self._ends.pop(next(iter(self._ends)))
            self._ends[_key(value)] = self._monotonic() + self.max_age
        return value

    def alive(self, value: str | None) -> bool:
        if not value:
            return False
        key = _key(value)
        with self._lock:
            ends = self._ends.get(key)
            if ends is None:
                return False
            if self._monotonic() >= ends:
                del self._ends[key]
                return False
            return True

    def end(self, value: str | None) -> bool:
        """Sign-out: ``True`` if the session was there."""
        if not value:
            return False
        with self._lock:
            return self._ends.pop(_key(value), None) is not None

    def end_all(self) -> int:
        """A new token: every session ends; how many there were."""
        with self._lock:
            count = len(self._ends)
            self._ends.clear()
            return count
