"""sd_notify message format, watchdog interval and the health-gated watchdog (no I/O)."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from jupcron.service.notify import Notifier, format_message, socket_address, watchdog_interval
from jupcron.service.watchdog import Watchdog


class Sink:
    def __init__(self) -> None:
        self.pings = 0

    def watchdog(self) -> bool:
        self.pings += 1
        return True


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"READY": 1}, b"READY=1"),
        ({"READY": 1, "STATUS": "3 plans, leader"}, b"READY=1\nSTATUS=3 plans, leader"),
        ({"STATUS": "two\nlines"}, b"STATUS=two lines"),
        ({"STOPPING": True}, b"STOPPING=1"),
        ({"WATCHDOG": "trigger"}, b"WATCHDOG=trigger"),
    ],
)
def test_format_message(fields: dict[str, object], expected: bytes) -> None:
    assert format_message(fields) == expected


def test_socket_address_abstract_and_path() -> None:
    assert socket_address("@jupcron/notify") == b"\0jupcron/notify"
    assert socket_address("/run/systemd/notify") == "/run/systemd/notify"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, None),
        ({"WATCHDOG_USEC": ""}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "-5"}, None),
        ({"WATCHDOG_USEC": "abc"}, None),
        ({"WATCHDOG_USEC": "60000000"}, 30.0),
        ({"WATCHDOG_USEC": "400000"}, 0.2),
        ({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "4242"}, 30.0),
        ({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "4243"}, None),
        ({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "x"}, None),
    ],
)
def test_watchdog_interval(env: dict[str, str], expected: float | None) -> None:
    assert watchdog_interval(env, pid=4242) == expected


def test_notifier_without_socket_is_a_quiet_no_op() -> None:
    notifier = Notifier(env={})
    assert notifier.enabled is False
    assert notifier.ready("x") is False
    assert notifier.watchdog() is False
    assert notifier.stopping() is False


def test_notifier_reports_an_unreachable_socket_once() -> None:
    notifier = Notifier(env={"NOTIFY_SOCKET": "/nonexistent/jupcron/notify.sock"})
    assert notifier.enabled
    with capture_logs() as logs:
        assert notifier.ready() is False
        assert notifier.status("still failing") is False
    notifier.close()
    assert [e["event"] for e in logs] == ["sd_notify_failed"]


def test_watchdog_pings_at_once_then_each_interval() -> None:
    sink = Sink()
    wd = Watchdog(sink, interval=10.0, clock=lambda: 0.0)
    assert wd.tick(now=100.0) is True
    assert wd.tick(now=105.0) is False
    assert wd.seconds_until_due(now=105.0, default=60.0) == 5.0
    assert wd.tick(now=110.0) is True
    assert wd.tick(now=125.0) is True
    assert sink.pings == 3


def test_watchdog_withholds_pings_while_unhealthy() -> None:
    sink = Sink()
    healthy = [True]
    wd = Watchdog(sink, interval=1.0, health=lambda: healthy[0])
    assert wd.tick(now=0.0)
    healthy[0] = False
    with capture_logs() as logs:
        assert wd.tick(now=1.0) is False
        assert wd.tick(now=2.0) is False
        healthy[0] = True
        assert wd.tick(now=3.0) is True
    assert sink.pings == 2
    assert [e["event"] for e in logs] == ["watchdog_withheld", "watchdog_resumed"]


def test_watchdog_health_check_that_raises_counts_as_unhealthy() -> None:
    def broken() -> bool:
        raise RuntimeError("store gone")

    sink = Sink()
    wd = Watchdog(sink, interval=1.0, health=broken)
    with capture_logs() as logs:
        assert wd.tick(now=0.0) is False
    assert sink.pings == 0
    assert "watchdog_health_check_failed" in [e["event"] for e in logs]


def test_watchdog_off_without_interval() -> None:
    sink = Sink()
    wd = Watchdog(sink, interval=None)
    assert wd.enabled is False
    assert wd.tick(now=0.0) is False
    assert wd.seconds_until_due(default=2.5) == 2.5
    assert sink.pings == 0


def test_watchdog_rejects_nonpositive_interval() -> None:
    with pytest.raises(ValueError, match="positive"):
        Watchdog(Sink(), interval=0)
