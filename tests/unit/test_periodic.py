"""The periodic thread (daemon/scheduling/periodic.py) behind the runway watch and
the order follower: work at start, again after each interval read anew, and a stop
that ends the wait at once."""

from __future__ import annotations

import threading

from jupcron.scheduling.periodic import Periodic


def test_work_runs_at_start_and_a_stop_ends_the_wait() -> None:
    ran = threading.Event()
    calls: list[str] = []

    def work() -> None:
        calls.append(threading.current_thread().name)
        ran.set()

    periodic = Periodic("sample", work, every=lambda: 3600.0)
    periodic.start()
    assert ran.wait(10)
    periodic.stop(timeout=10)  # the hour's wait ends at the stop: the join returns
    assert calls == ["sample"]
    assert not any(t.name == "sample" for t in threading.enumerate())


def test_the_interval_is_read_again_each_turn() -> None:
    third = threading.Event()
    calls: list[int] = []
    intervals = iter([0.0, 0.0])  # then an hour: a third call, no fourth

    def work() -> None:
        calls.append(len(calls))
        if len(calls) == 3:
            third.set()

    periodic = Periodic("sample", work, every=lambda: next(intervals, 3600.0))
    periodic.start()
    assert third.wait(10)
    periodic.stop(timeout=10)
    assert calls == [0, 1, 2]


def test_a_stopped_one_starts_again() -> None:
    ran = threading.Semaphore(0)
    periodic = Periodic("sample", ran.release, every=lambda: 3600.0)
    periodic.start()
    assert ran.acquire(timeout=10)
    periodic.stop(timeout=10)
    periodic.start()
    assert ran.acquire(timeout=10)
    periodic.stop(timeout=10)
    periodic.stop(timeout=10)  # twice: nothing left to stop
