"""Failpoints: named places in the run where tests and chaos runs make the process die.

``JUPCRON_FAILPOINTS=after_sign`` (comma-separated names, each optionally
``name:N`` to fire on the N-th pass, and ``name@PLAN`` to fire only for the runs of
that plan) makes the process SIGKILL itself when a run passes that place: a crash
at an exact step boundary, with nothing flushed or cleaned up. ``name=stall`` (or
``name:N=stall``) makes it SIGSTOP itself there instead: every thread stops, the
main loop included, so the systemd watchdog stops being pinged (a hung daemon;
SIGCONT resumes it).
In-process tests use `arm(name)`, which raises `SimulatedCrash` (a
BaseException our code never catches) instead. Unset, a failpoint is one
dict lookup.
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


# what an armed failpoint does to the process (kill mode, from the environment)
ACTIONS = ("kill", "stall")


class SimulatedCrash(BaseException):
    """The process "died" here (in-process tests only)."""


_lock = threading.Lock()
_armed: dict[str, int] = {}
_stall: set[str] = set()  # armed names that stop the process instead of killing it
_plans: dict[str, str] = {}  # armed names that fire only for the runs of this plan
_raise = False


def _parse(text: str) -> dict[str, int]:
    return {name: nth for name, (nth, _) in _parse_actions(text).items()}


def _parse_actions(text: str) -> dict[str, tuple[int, str]]:
    """``"after_sign:2=stall,after_claim"`` -> ``{name: (nth, action)}``."""
    return {name: (nth, action) for name, (nth, action, _) in _parse_specs(text).items()}


def _parse_specs(text: str) -> dict[str, tuple[int, str, str | None]]:
    """``"after_sign:2=stall,after_claim@PLAN"`` -> ``{name: (nth, action, plan)}``."""
    armed: dict[str, tuple[int, str, str | None]] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        spec, _, action = part.partition("=")
        spec, at, plan = spec.partition("@")
        name, _, nth = spec.partition(":")
        if name not in NAMES:
            raise ValueError(f"unknown failpoint {name!r}; known: {', '.join(NAMES)}")
        if action and action not in ACTIONS:
            raise ValueError(f"unknown failpoint action {action!r}; known: {', '.join(ACTIONS)}")
        armed[name] = (int(nth) if nth else 1, action or "kill", plan if at else None)
    return armed


def load_from_env() -> None:
    """Arm the failpoints named in ``$JUPCRON_FAILPOINTS`` (kill mode)."""
    global _raise
    parsed = _parse_specs(os.environ.get(ENV, ""))
    with _lock:
        _armed.clear()
        _armed.update({name: nth for name, (nth, _, _) in parsed.items()})
        _stall.clear()
        _stall.update(name for name, (_, action, _) in parsed.items() if action == "stall")
        _plans.clear()
        _plans.update({name: plan for name, (_, _, plan) in parsed.items() if plan is not None})
        _raise = False


def arm(name: str, nth: int = 1) -> None:
    """In-process: raise `SimulatedCrash` at `name` on its `nth` pass."""
    global _raise
    with _lock:
        _armed.update(_parse(f"{name}:{nth}"))
        _stall.discard(name)
        _raise = True


def disarm() -> None:
    with _lock:
        _armed.clear()
        _stall.clear()
        _plans.clear()


def hit(name: str, plan: str | None = None) -> None:
    """A run of `plan` passes `name`: the process dies (or stalls) here if armed."""
    if not _armed:
        return
    with _lock:
        left = _armed.get(name)
        if left is None:
            return
        if name in _plans and _plans[name] != plan:
            return  # armed for another plan's runs
        if left > 1:
            _armed[name] = left - 1
            return
        del _armed[name]
        crash_by_raise = _raise
        stall = name in _stall
    if crash_by_raise:
        raise SimulatedCrash(name)
    os.kill(os.getpid(), signal.SIGSTOP if stall else signal.SIGKILL)
