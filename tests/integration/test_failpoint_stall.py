"""`name=stall` stops the whole process at the failpoint (every thread: no watchdog ping
from its loop); SIGCONT lets it go on. A real process, checked through /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import threading, time
from jupcron import failpoints
failpoints.load_from_env()
ticks = []
def loop():
    while True:
        ticks.append(1)
        time.sleep(0.01)
threading.Thread(target=loop, daemon=True).start()
print("armed", flush=True)
failpoints.hit("after_claim")  # not armed: passes
failpoints.hit("after_sign")
print("resumed", flush=True)
"""


def state(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("State:"):
            return line.split()[1]
    raise AssertionError("no State line")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_stall_stops_every_thread_until_sigcont() -> None:
    env = {**os.environ, "JUPCRON_FAILPOINTS": "after_sign=stall"}
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "armed"
        deadline = time.monotonic() + 30
        while state(proc.pid) != "T":
            assert time.monotonic() < deadline, "the process did not stop"
            time.sleep(0.01)
        threads = list(Path(f"/proc/{proc.pid}/task").iterdir())
        assert len(threads) == 2
        # the stop reaches each thread in turn: wait until /proc shows every one stopped
        stopped = lambda: all((t / "stat").read_text().split(") ")[1][0] == "T" for t in threads)  # noqa: E731
        while not stopped():
            assert time.monotonic() < deadline, "a thread did not stop"
            time.sleep(0.01)
        assert proc.poll() is None
        os.kill(proc.pid, signal.SIGCONT)
        out, _ = proc.communicate(timeout=30)
        assert out.strip() == "resumed"
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
