"""Stopping a child process we started: SIGTERM, a bounded wait, then SIGKILL."""

from __future__ import annotations

import signal
import subprocess
from typing import Any

KILL_WAIT = 10.0


def terminate(proc: subprocess.Popen[Any], timeout: float) -> int | None:
    """Ask `proc` to stop, give it `timeout` seconds, then kill it; its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(KILL_WAIT)
    return proc.returncode
