"""Failpoints: named places in the run where tests and chaos runs make the process die.

``JUPCRON_FAILPOINTS=after_sign`` (comma-separated names, each optionally
``name:N`` to fire on the N-th pass) makes the process SIGKILL itself when a
run passes that place: a crash at an exact step boundary, with nothing
flushed or cleaned up. In-process tests use `arm(name)`, which raises
`SimulatedCrash` (a BaseException our code never catches) instead.
Unset, a failpoint is one dict lookup.
"""

from __future__ import annotations

import os
import signal
import threading

ENV = "JUPCRON_FAILPOINTS"

# the step boundaries of a run, in order
NAMES = (
    "after_claim",  # the row is pending
    "after_order",  # the API answered; requested not yet stored
    "after_requested",  # requested stored; nothing signed
    "after_sign",  # signed stored; nothing posted
    "before_execute",  # submitted stored; about to post
    "after_execute",  # the API answered execute; the outcome not yet stored
)


class SimulatedCrash(BaseException):
    """The process "died" here (in-process tests only)."""


_lock = threading.Lock()
_armed: dict[str, int] = {}
_raise = False


def _parse(text: str) -> dict[str, int]:
    armed: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, nth = part.partition(":")
        if name not in NAMES:
            raise ValueError(f"unknown failpoint {name!r}; known: {', '.join(NAMES)}")
        armed[name] = int(nth) if nth else 1
    return armed


def load_from_env() -> None:
    """Arm the failpoints named in ``$JUPCRON_FAILPOINTS`` (kill mode)."""
    global _raise
    text = os.environ.get(ENV, "")
    with _lock:
        _armed.clear()
        _armed.update(_parse(text))
        _raise = False


def arm(name: str, nth: int = 1) -> None:
    """In-process: raise `SimulatedCrash` at `name` on its `nth` pass."""
    global _raise
    with _lock:
        _armed.update(_parse(f"{name}:{nth}"))
        _raise = True


def disarm() -> None:
    with _lock:
        _armed.clear()


def hit(name: str) -> None:
    if not _armed:
        return
    with _lock:
        left = _armed.get(name)
        if left is None:
            return
        if left > 1:
            _armed[name] = left - 1
            return
        del _armed[name]
        crash_by_raise = _raise
    if crash_by_raise:
        raise SimulatedCrash(name)
    os.kill(os.getpid(), signal.SIGKILL)
