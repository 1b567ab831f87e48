"""Servers stopped behind the tests instead of in their teardown.

Stopping a test's server is waiting: `EmulatorServer.stop` asks uvicorn's loop to
exit, and the loop sees it on its next tick (every 0.1 s); `Listener.stop` (the status
page, the metrics) is socketserver's `shutdown`, seen on the next poll (every 0.2 s).
A fixture's teardown waited 0.1-0.3 s for that, and hundreds of tests start a server.
A fixture hands its server's stop here once the test is over: it runs exactly as
before (the same `stop()`, the same grace for held answers, then whatever the fixture
closed after it, in the same order), on a thread of its own, while the next test
starts. Each server listens on a port of its own and each test has its own database,
so nothing of one test reaches the next. Every stop is waited for at the end of the
session (`drain`, from tests/conftest.py), and one that raised is raised there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol


class Stoppable(Protocol):
    def stop(self) -> None: ...


_lock = threading.Lock()
_running: list[threading.Thread] = []
_failed: list[BaseException] = []


def later(*steps: Callable[[], object]) -> None:
    """Run `steps` in order on a thread of its own (one that raises ends them)."""

    def run() -> None:
        try:
            for step in steps:
                step()
        except BaseException as exc:  # raised by drain(), at the session's end
            with _lock:
                _failed.append(exc)

    thread = threading.Thread(target=run, name="stop-behind", daemon=True)
    thread.start()
    with _lock:
        _running[:] = [t for t in _running if t.is_alive()]
        _running.append(thread)


def stop_later(server: Stoppable) -> None:
    later(server.stop)


def drain(timeout: float = 30.0) -> None:
    """Wait for everything handed over; raise the first that failed."""
    with _lock:
        threads = list(_running)
    for thread in threads:
        thread.join(timeout)
    with _lock:
        failed, _failed[:] = list(_failed), []
    if failed:
        raise failed[0]
