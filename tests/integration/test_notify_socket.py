"""sd_notify over a real unix datagram socket, and a service loop run as a real process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import uuid

from jupcron.service.notify import Notifier
from tests.fixtures.service import NotifyListener

# A stub service loop built from our pieces, the way `jupcron run` uses them.
STUB = textwrap.dedent(
    """
    import sys
    from jupcron.service.notify import Notifier, watchdog_interval
    from jupcron.service.signals import SignalEvent, SignalInbox
    from jupcron.service.watchdog import Watchdog

    notifier = Notifier()
    inbox = SignalInbox()
    inbox.install()
    healthy = sys.argv[1] == "healthy"
    wd = Watchdog(notifier, watchdog_interval(), health=lambda: healthy)
    notifier.ready("stub: 0 plans, leader")
    while not inbox.stop_requested:
        wd.tick()
        for event in inbox.wait(wd.seconds_until_due(default=1.0)):
            if event is SignalEvent.RELOAD:
                notifier.reloading()
                notifier.ready("stub: reloaded")
    notifier.stopping("stub: stopping")
    inbox.close()
    sys.exit(0)
    """
)


def start_stub(listener: NotifyListener, health: str = "healthy") -> subprocess.Popen[bytes]:
    env = {**os.environ, **listener.env(watchdog_usec=300_000)}
    env.pop("WATCHDOG_PID", None)
    return subprocess.Popen(
        [sys.executable, "-c", STUB, health],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_notifier_sends_to_a_path_socket(notify_socket: NotifyListener) -> None:
    notifier = Notifier(env={"NOTIFY_SOCKET": notify_socket.path})
    assert notifier.ready("2 plans") is True
    assert notifier.watchdog() is True
    assert notifier.reloading() is True
    notifier.close()
    assert notify_socket.wait_for("WATCHDOG=1")
    assert notify_socket.wait_until(lambda lines: any(x.startswith("RELOADING") for x in lines))
    first, second, third = notify_socket.messages()
    assert first == {"READY": "1", "STATUS": "2 plans"}
    assert second == {"WATCHDOG": "1"}
    assert third["RELOADING"] == "1"
    assert int(third["MONOTONIC_USEC"]) > 0


def test_notifier_sends_to_an_abstract_socket() -> None:
    name = f"jupcron-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(b"\0" + name.encode())
        server.settimeout(5)
        notifier = Notifier(env={"NOTIFY_SOCKET": "@" + name})
        assert notifier.stopping() is True
        notifier.close()
        assert server.recv(1024) == b"STOPPING=1"


def test_service_loop_ready_watchdog_stopping_exit_zero(notify_socket: NotifyListener) -> None:
    proc = start_stub(notify_socket)
    try:
        assert notify_socket.wait_for("READY=1", timeout=20), proc.stderr
        # WATCHDOG_USEC=300ms -> a ping every 150 ms; wait for several, not for a time
        assert notify_socket.wait_for("WATCHDOG=1", timeout=20, count=4)
        assert notify_socket.count("STOPPING=1") == 0
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    assert notify_socket.wait_for("STATUS=stub: stopping")  # the listener thread may lag
    lines = notify_socket.lines()
    assert lines.index("READY=1") < lines.index("WATCHDOG=1") < lines.index("STOPPING=1")
    assert lines[-2:] == ["STOPPING=1", "STATUS=stub: stopping"]


def test_service_loop_reload_on_sighup(notify_socket: NotifyListener) -> None:
    proc = start_stub(notify_socket)
    try:
        assert notify_socket.wait_for("READY=1", timeout=20)
        proc.send_signal(signal.SIGHUP)
        assert notify_socket.wait_for("READY=1", timeout=20, count=2)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    reload_message = next(m for m in notify_socket.messages() if "RELOADING" in m)
    assert int(reload_message["MONOTONIC_USEC"]) > 0


def test_unhealthy_loop_sends_no_watchdog(notify_socket: NotifyListener) -> None:
    proc = start_stub(notify_socket, health="sick")
    try:
        assert notify_socket.wait_for("READY=1", timeout=20)
        # the loop ticks before each wait, so a healthy stub would have pinged by the 2nd READY
        proc.send_signal(signal.SIGHUP)
        assert notify_socket.wait_for("READY=1", timeout=20, count=2)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert notify_socket.wait_for("STOPPING=1")
    assert notify_socket.count("WATCHDOG=1") == 0
