"""Webhook deliveries are counted on /metrics as the Apprise alerts are:
`jupcron_webhook_notifications_total{event, result}` with ``result`` one of ``sent``,
``failed`` (given up: refused, or retries exhausted) and ``dropped`` (never tried:
the queue full, or the notifier stopping). Before, only a log line said a failure.
Real loopback receivers; the daemon's own wiring as a subprocess."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from jupcron.listen.metrics import Metrics
from jupcron.service.webhook import Notification, WebhookNotifier
from tests.fixtures.daemon import DaemonEnvFactory, at, swap_plan
from tests.fixtures.receivers import HttpReceiver, free_port

NOW = datetime(2026, 12, 1, 9, 0, 5, tzinfo=UTC)
SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)
SERIES = "jupcron_webhook_notifications_total"


def count(metrics: Metrics, result: str, event: str = "misfire") -> float:
    value = metrics.registry.get_sample_value(SERIES, {"event": event, "result": result})
    return value or 0.0


def misfire(plan: str = "dca") -> Notification:
    return Notification.misfire(plan, SLOT, NOW)


def hook_url(receiver: HttpReceiver) -> str:
    return f"http://127.0.0.1:{receiver.server.server_address[1]}/hook"


def test_sent_failed_and_dropped_deliveries_are_counted(http_receiver: HttpReceiver) -> None:
    metrics = Metrics()
    sent = WebhookNotifier(hook_url(http_receiver), on_result=metrics.record_webhook).start()
    sent.send(misfire())
    sent.stop()
    assert http_receiver.bodies
    assert count(metrics, "sent") == 1

    # nothing listens there: a transport error each try, given up after the last
    gone = WebhookNotifier(f"http://127.0.0.1:{free_port()}/hook", max_attempts=2, backoff=0,
                           on_result=metrics.record_webhook).start()  # fmt: skip
    gone.send(misfire())
    gone.stop()
    assert count(metrics, "failed") == 1

    full = WebhookNotifier(hook_url(http_receiver), queue_size=1,
                           on_result=metrics.record_webhook)  # fmt: skip
    assert full.send(misfire("a"))
    assert not full.send(misfire("b"))  # the queue is full (the thread not started yet)
    full.start().stop()
    assert not full.send(misfire("c"))  # stopping: no more deliveries
    assert count(metrics, "dropped") == 2
    assert count(metrics, "sent") == 2  # what was queued was still delivered at the stop
    # low cardinality: no plan, no URL in the labels
    series = [line for line in metrics.render().decode().splitlines() if "{" in line]
    assert not [line for line in series if "/hook" in line or 'plan="' in line]
    assert {"sent", "failed", "dropped"} == {
        label for line in series for label in re.findall(r'result="(\w+)"', line)
    }


class _Refusing(BaseHTTPRequestHandler):
    """A receiver that refuses every body (400: given up at once, not retried)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(400)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def refusing() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()
    thread.join()


def test_the_daemon_counts_a_refused_webhook_delivery(
    daemon_env: DaemonEnvFactory, refusing: str
) -> None:
    env = daemon_env()
    port = free_port()
    env.write_config(notify={"webhook_url": refusing}, metrics={"listen": f"127.0.0.1:{port}"})
    env.emulator.faults.add("hostile", operation="ultra_order")  # the run is rejected
    written = at(0)
    env.write_plans(swap_plan("hostile", {"at": at(2)}))
    env.apply(now=written)
    proc = env.start()
    pattern = re.compile(SERIES + r'\{event="run_rejected",result="failed"\} 1\.0')

    def counted() -> bool:
        try:
            body = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
        except httpx.HTTPError:
            return False
        return bool(pattern.search(body))

    assert env.wait_until(counted, timeout=30), env.log_of(proc)
    assert "webhook_rejected" in env.log_of(proc)
    assert env.stop(proc) == 0
