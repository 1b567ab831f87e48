"""A piece of work on a thread of its own: once at start, then every so many seconds
until stopped (the leader's runway watch, the order follower).

    start ─► work() ─► wait every() seconds (the interval of the config in effect now,
             read again each time) ─► work() ─► ...
    stop ─► the wait ends at once; the thread is joined (up to `timeout`: a work()
            under way is not interrupted, and its thread is a daemon thread)

`work` must not raise: each user catches and logs its own errors, so that one
failed turn never ends the thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Periodic:
    def __init__(self, name: str, work: Callable[[], None], every: Callable[[], float]) -> None:
        self.name = name  # the thread's name
        self.work = work
        self.every = every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            self.work()
            self._stop.wait(self.every())
