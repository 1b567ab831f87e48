"""The systemd notify protocol (sd_notify) without a dependency.

A message is ``KEY=VALUE`` lines sent as one datagram to the AF_UNIX socket
named in ``$NOTIFY_SOCKET`` (a leading ``@`` means the abstract namespace).
Without ``$NOTIFY_SOCKET`` (not under systemd) every call is a no-op, so the
daemon calls the same methods whether or not it runs as a unit.

Sending never raises: a lost notification must not stop the scheduler. A
failed send is logged once (``sd_notify_failed``) and `send` returns False.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Mapping

import structlog

log = structlog.get_logger(__name__)


def socket_address(value: str) -> str | bytes:
    """The address to send to: a path, or the abstract name as bytes (``@x`` -> ``b"\\0x"``)."""
    if value.startswith("@"):
        return b"\0" + value[1:].encode()
    return value


def format_message(fields: Mapping[str, object]) -> bytes:
    """``{"READY": 1, "STATUS": "ok"}`` -> ``b"READY=1\\nSTATUS=ok"`` (newlines in values
    are replaced by spaces: a value is one line)."""
    lines = []
    for key, value in fields.items():
        text = str(int(value) if isinstance(value, bool) else value)
        lines.append(f"{key}={' '.join(text.splitlines())}")
    return "\n".join(lines).encode()


def watchdog_interval(env: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """Seconds between ``WATCHDOG=1`` pings: half of ``$WATCHDOG_USEC``.

    None when the watchdog is off: ``WATCHDOG_USEC`` unset, zero or not a
    number, or ``WATCHDOG_PID`` set to another process than ours.
    """
    env = os.environ if env is None else env
    raw = env.get("WATCHDOG_USEC", "").strip()
    if not raw:
        return None
    try:
        usec = int(raw)
    except ValueError:
        return None
    if usec <= 0:
        return None
    wanted_pid = env.get("WATCHDOG_PID", "").strip()
    if wanted_pid:
        try:
            if int(wanted_pid) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            return None
    return usec / 2_000_000


class Notifier:
    """Talks to the service manager; a no-op when ``$NOTIFY_SOCKET`` is unset."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        raw = env.get("NOTIFY_SOCKET", "").strip()
        self.address: str | bytes | None = socket_address(raw) if raw else None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._warned = False

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, **fields: object) -> bool:
        """Send one message, e.g. ``send(READY=1, STATUS="3 plans, leader")``."""
        if self.address is None or not fields:
            return False
        payload = format_message(fields)
        with self._lock:
            try:
                if self._sock is None:
                    self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                    self._sock.setblocking(False)
                self._sock.sendto(payload, self.address)
            except OSError as exc:
                if not self._warned:
                    self._warned = True
                    log.warning("sd_notify_failed", error=str(exc))
                return False
        return True

    def ready(self, status: str | None = None) -> bool:
        if status is None:
            return self.send(READY=1)
        return self.send(READY=1, STATUS=status)

    def status(self, text: str) -> bool:
        return self.send(STATUS=text)

    def watchdog(self) -> bool:
        return self.send(WATCHDOG=1)

    def stopping(self, status: str | None = None) -> bool:
        if status is None:
            return self.send(STOPPING=1)
        return self.send(STOPPING=1, STATUS=status)

    def reloading(self) -> bool:
        """``RELOADING=1`` with ``MONOTONIC_USEC`` (needed by Type=notify-reload);
        send `ready` when the reload is done."""
        return self.send(RELOADING=1, MONOTONIC_USEC=time.monotonic_ns() // 1000)

    def close(self) -> None:
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
