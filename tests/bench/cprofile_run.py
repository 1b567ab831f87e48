"""Run a Python module with cProfile in every thread, CPU time as the clock.

    python -m tests.bench.cprofile_run OUT.prof -m daemon --config C run

Each thread gets its own profiler (timer ``time.thread_time``: CPU, not wall
time, so a loaded machine changes the shares little); at exit they are merged
into one pstats file, OUT.prof (``python -m pstats OUT.prof``). The benchmarks
start the daemon through this with ``JUPCRON_BENCH_CPROFILE=DIR``.
"""

from __future__ import annotations

import atexit
import cProfile
import pstats
import runpy
import sys
import threading
import time
from types import FrameType
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()


def _start(frame: FrameType, event: str, arg: Any) -> None:
    """The first profile event of a new thread: give it a profiler of its own
    (enable() replaces this hook for the thread)."""
    profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(profile)
    profile.enable()


def _dump(out: str) -> None:
    with _lock:
        profiles = list(_profiles)
    stats: pstats.Stats | None = None
    for profile in profiles:
        profile.disable()
        try:
            profile.create_stats()
        except Exception:  # noqa: S112 - a thread's profiler that never ran
            continue
        if stats is None:
            stats = pstats.Stats(profile)
        else:
            stats.add(profile)
    if stats is not None:
        stats.dump_stats(out)


def main() -> None:
    out = sys.argv[1]
    if sys.argv[2] != "-m":
        raise SystemExit("usage: cprofile_run OUT.prof -m MODULE [ARGS...]")
    module = sys.argv[3]
    sys.argv = [module, *sys.argv[4:]]
    atexit.register(_dump, out)
    threading.setprofile(_start)
    main_profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(main_profile)
    main_profile.enable()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
