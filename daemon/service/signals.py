"""Signals as messages for a synchronous main loop (self-pipe, no handler work).

The handlers do nothing themselves; ``signal.set_wakeup_fd`` writes each
signal number to a pipe and `SignalInbox.wait` reads them, so the loop sleeps
in ``select`` and wakes at once on SIGTERM/SIGINT (stop) or SIGHUP (reload).
Other threads may wake the loop too (`request_stop`, `wake`).

    inbox = SignalInbox(); inbox.install()          # main thread only
    while not inbox.stop_requested:
        for event in inbox.wait(timeout=1.0):
            if event is SignalEvent.RELOAD: reload()
    inbox.uninstall()
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from enum import StrEnum
from types import FrameType
from typing import Any

import structlog

log = structlog.get_logger(__name__)

_WAKE = 0  # a byte that is no signal number: just wake the loop


class SignalEvent(StrEnum):
    STOP = "stop"
    RELOAD = "reload"
    WAKE = "wake"


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RELOAD_SIGNALS = (signal.SIGHUP,)


def _ignore(_signum: int, _frame: FrameType | None) -> None:
    """The real work happens in `SignalInbox.wait` (the wakeup fd got the number)."""


class SignalInbox:
    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._old_handlers: dict[int, Any] = {}
        self._old_wakeup: int | None = None
        self._stop = threading.Event()
        self.installed = False

    # -- set up -----------------------------------------------------------
    def install(self) -> None:
        """Take over SIGTERM, SIGINT and SIGHUP (call from the main thread)."""
        if self.installed:
            return
        self._old_wakeup = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        for signum in (*STOP_SIGNALS, *RELOAD_SIGNALS):
            self._old_handlers[signum] = signal.signal(signum, _ignore)
        self.installed = True

    def uninstall(self) -> None:
        if not self.installed:
            return
        for signum, handler in self._old_handlers.items():
            signal.signal(signum, handler)
        self._old_handlers.clear()
        signal.set_wakeup_fd(self._old_wakeup if self._old_wakeup is not None else -1)
        self.installed = False

    def close(self) -> None:
        self.uninstall()
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)

    # -- from other threads ---------------------------------------------
    def request_stop(self) -> None:
        """Stop as if SIGTERM had come (e.g. a fatal error in a worker)."""
        self._stop.set()
        self.wake()

    def wake(self) -> None:
        # a full pipe means the loop wakes anyway
        with contextlib.suppress(BlockingIOError):
            os.write(self._write, bytes([_WAKE]))

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    # -- the loop ---------------------------------------------------------
    def wait(self, timeout: float | None) -> list[SignalEvent]:
        """Sleep up to ``timeout`` seconds or until a signal/wake; the events, in order
        (duplicates folded). A stop also sets `stop_requested`."""
        try:
            ready, _, _ = select.select([self._read], [], [], timeout)
        except InterruptedError:  # pragma: no cover - PEP 475 retries select
            ready = [self._read]
        if not ready:
            return []
        try:
            data = os.read(self._read, 4096)
        except BlockingIOError:
            return []
        events: list[SignalEvent] = []
        for byte in data:
            if byte in STOP_SIGNALS:
                event = SignalEvent.STOP
                if not self._stop.is_set():
                    log.info("stop_requested", signal=signal.Signals(byte).name)
                self._stop.set()
            elif byte in RELOAD_SIGNALS:
                event = SignalEvent.RELOAD
                log.info("reload_requested", signal=signal.Signals(byte).name)
            elif byte == _WAKE:
                event = SignalEvent.STOP if self._stop.is_set() else SignalEvent.WAKE
            else:
                continue
            if event not in events:
                events.append(event)
        return events
