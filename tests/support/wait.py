"""Polling for a condition with a deadline (tests, benchmarks, chaos)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(what: Callable[[], bool], timeout: float, step: float = 0.2) -> bool:
    """True as soon as `what()` is; after `timeout` seconds, its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(step)
    return what()
