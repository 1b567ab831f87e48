"""Webhook notifications over loopback HTTP: payload, retries, give-ups, no secrets."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from jupcron.domain import RunStatus
from jupcron.errors import ConfigError
from jupcron.runner.outcome import RunOutcome
from jupcron.service.listeners import WebhookListener
from jupcron.service.webhook import Notification, WebhookEvent, WebhookNotifier
from jupcron.store.records import RunRecord
from jupcron.urls import mask_url
from tests.support.pgcluster import free_port

NOW = datetime(2025, 3, 1, 12, 0, 5, tzinfo=UTC)
SLOT = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
SIGNED_TX = "AQAAAAAAAAAAAAAAAAAAsignedTransactionBase64Secretish=="
TOKEN = "T0KEN-in-the-path"


class Receiver(ThreadingHTTPServer):
    """A loopback webhook receiver answering with the statuses in ``script`` (then 200)."""

    daemon_threads = True

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.script: list[int] = []
        self.got = threading.Condition()
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hooks/{TOKEN}"

    def wait_requests(self, count: int, timeout: float = 10.0) -> bool:
        with self.got:
            return self.got.wait_for(lambda: len(self.bodies) >= count, timeout)


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length))
        with self.server.got:  # recorded before answering: the sender sees it at once
            status = self.server.script.pop(0) if self.server.script else 200
            self.server.bodies.append(body)
            self.server.paths.append(self.path)
            self.server.got.notify_all()
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def run_record(status: RunStatus, **changes: Any) -> RunRecord:
    base = RunRecord(
        id=17,
        plan_id=3,
        plan_version=2,
        scheduled_for=SLOT,
        status=status,
        trigger="schedule",
        request_id="req-abc",
        unsigned_tx="unsigned-base64",
        signed_tx=SIGNED_TX,
        signature="5sig",
        expires_at=None,
        slot=None,
        input_mint="So11111111111111111111111111111111111111112",
        output_mint="EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        in_amount="1000000",
        out_amount=None,
        order_account=None,
        error_code="-1",
        error="execute failed; rpc https://user:hunter2@rpc.example/ said no",
        attempts=1,
        claimed_by="host-a",
        created_at=SLOT,
        updated_at=NOW,
        finished_at=NOW,
    )
    return replace(base, **changes)


def notifier(url: str, **kwargs: Any) -> WebhookNotifier:
    kwargs.setdefault("backoff", 0.01)
    kwargs.setdefault("max_attempts", 4)
    return WebhookNotifier(url, source="jupcron@test", **kwargs).start()


@pytest.mark.parametrize(
    ("status", "event"),
    [
        (RunStatus.FAILED, "run_failed"),
        (RunStatus.REJECTED, "run_rejected"),
        (RunStatus.IN_DOUBT, "run_in_doubt"),
    ],
)
def test_run_statuses_are_posted_without_secrets(
    receiver: Receiver, status: RunStatus, event: str
) -> None:
    hook = notifier(receiver.url)
    with capture_logs() as logs:
        assert hook.send_run(run_record(status), plan="dca-sol", now=NOW, kind="recurring_time")
        assert receiver.wait_requests(1)
        hook.stop()
    (body,) = receiver.bodies
    assert body["event"] == event
    assert body["plan"] == "dca-sol"
    assert body["run_id"] == 17
    assert body["status"] == str(status)
    assert body["kind"] == "recurring_time"
    assert body["scheduled_for"] == "2025-03-01T12:00:00Z"
    assert body["at"] == "2025-03-01T12:00:05Z"
    assert body["request_id"] == "req-abc"
    assert body["signature"] == "5sig"
    assert body["source"] == "jupcron@test"
    assert "dca-sol" in body["text"]
    raw = json.dumps(body)
    for secret in (SIGNED_TX, "unsigned-base64", "hunter2"):
        assert secret not in raw
    assert "https://user:***@rpc.example/" in body["reason"]
    sent = [e for e in logs if e["event"] == "webhook_sent"]
    assert sent
    assert sent[0]["host"] == "127.0.0.1"
    assert TOKEN not in repr(logs)


def test_the_daemons_listener_posts_the_runs_message(receiver: Receiver) -> None:
    """The daemon hears of a run as the runner's `RunOutcome`: the message it posts is
    the one its row makes, secrets masked in the reason too."""
    run = run_record(RunStatus.FAILED)
    hook = notifier(receiver.url)
    outcome = RunOutcome(
        run_id=run.id, plan_name="dca-sol", kind="recurring_time",
        scheduled_for=run.scheduled_for, status=run.status, request_id=run.request_id,
        signature=run.signature, error_code=run.error_code, error=run.error,
    )  # fmt: skip
    WebhookListener(hook).run_finished(outcome)
    assert receiver.wait_requests(1)
    hook.send_run(run, plan="dca-sol", now=NOW, kind="recurring_time")
    assert receiver.wait_requests(2)
    hook.stop()
    heard, from_row = receiver.bodies
    assert "hunter2" not in json.dumps(heard)
    assert "https://user:***@rpc.example/" in heard["reason"]
    del heard["at"], from_row["at"]  # the listener's is the time it heard of the run
    assert heard == from_row


@pytest.mark.parametrize("status", [RunStatus.SUCCEEDED, RunStatus.SKIPPED, RunStatus.PENDING])
def test_other_statuses_are_not_posted(status: RunStatus) -> None:
    assert Notification.for_run(run_record(status), "p", NOW) is None


def test_misfire_is_posted(receiver: Receiver) -> None:
    hook = notifier(receiver.url)
    hook.send(Notification.misfire("dca-sol", SLOT, NOW, kind="recurring_time"))
    assert receiver.wait_requests(1)
    hook.stop()
    body = receiver.bodies[0]
    assert body["event"] == str(WebhookEvent.MISFIRE)
    assert body["run_id"] is None
    assert "missed its 2025-03-01T12:00:00Z slot" in body["text"]


def test_server_errors_are_retried_until_delivered(receiver: Receiver) -> None:
    receiver.script = [500, 503, 429]
    hook = notifier(receiver.url)
    with capture_logs() as logs:
        hook.send_run(run_record(RunStatus.FAILED), "p", NOW)
        assert receiver.wait_requests(4)
        hook.stop()
    events = [e["event"] for e in logs]
    assert events.count("webhook_retry") == 3
    assert events[-1] == "webhook_sent"
    assert hook.delivered == 1


def test_client_error_is_not_retried(receiver: Receiver) -> None:
    receiver.script = [400]
    hook = notifier(receiver.url)
    with capture_logs() as logs:
        hook.send_run(run_record(RunStatus.REJECTED), "p", NOW)
        assert receiver.wait_requests(1)
        hook.stop()
    assert len(receiver.bodies) == 1
    assert [e["event"] for e in logs] == ["webhook_rejected"]
    assert logs[0]["outcome"] == "http_400"


def test_retries_are_bounded(receiver: Receiver) -> None:
    receiver.script = [500] * 10
    hook = notifier(receiver.url, max_attempts=3)
    with capture_logs() as logs:
        hook.send_run(run_record(RunStatus.IN_DOUBT), "p", NOW)
        assert receiver.wait_requests(3)
        hook.stop()
    assert len(receiver.bodies) == 3
    assert [e["event"] for e in logs][-1] == "webhook_failed"


def test_unreachable_receiver_does_not_block_the_caller() -> None:
    hook = notifier(f"http://127.0.0.1:{free_port()}/hook", max_attempts=2)
    with capture_logs() as logs:
        assert hook.send_run(run_record(RunStatus.FAILED), "p", NOW) is True
        hook.stop()
    assert hook.delivered == 0
    assert "webhook_failed" in [e["event"] for e in logs]


def test_stop_delivers_what_is_queued(receiver: Receiver) -> None:
    hook = notifier(receiver.url)
    for run_id in range(5):
        hook.send_run(run_record(RunStatus.FAILED, id=run_id), "p", NOW)
    hook.stop()
    assert sorted(b["run_id"] for b in receiver.bodies) == [0, 1, 2, 3, 4]
    assert hook.send_run(run_record(RunStatus.FAILED), "p", NOW) is False


def test_full_queue_drops_with_a_log_line() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200)

    hook = WebhookNotifier(
        "http://127.0.0.1:9/hook", transport=httpx.MockTransport(handler), queue_size=1
    )  # not started: nothing drains the queue
    with capture_logs() as logs:
        assert hook.send(Notification.misfire("p", SLOT, NOW)) is True
        assert hook.send(Notification.misfire("p", SLOT, NOW)) is False
    assert hook.dropped == 1
    assert [e["event"] for e in logs] == ["webhook_dropped"]
    hook.stop()


@pytest.mark.parametrize("url", ["ftp://example.com/x", "not a url", "http://"])
def test_bad_url_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="webhook_url"):
        WebhookNotifier(url)


def test_the_token_travels_in_the_path_and_shows_nowhere(receiver: Receiver) -> None:
    hook = notifier(receiver.url)
    with capture_logs() as logs:
        hook.send_run(run_record(RunStatus.FAILED), "p", NOW)
        assert receiver.wait_requests(1)
        hook.stop()
    assert receiver.paths == [f"/hooks/{TOKEN}"]  # the real URL was posted to
    assert TOKEN not in repr(hook)
    assert repr(hook) == f"WebhookNotifier(url='http://127.0.0.1:{receiver.server_address[1]}/***')"
    assert TOKEN not in repr(logs)


@pytest.mark.parametrize(
    "url", ["http://hooks.example.com/services/T0/B0/" + TOKEN, "http://10.1.2.3/h?token=" + TOKEN]
)
def test_plain_http_to_another_machine_is_refused_unless_allowed(url: str) -> None:
    with pytest.raises(ConfigError) as refused:
        WebhookNotifier(url)
    message = str(refused.value)
    assert TOKEN not in message
    assert message.startswith(f"notify.webhook_url {mask_url(url)!r}: plain http:// to ")
    assert message.endswith("use https://, or set notify.allow_insecure_http: true")
    hook = WebhookNotifier(url, allow_insecure_http=True)  # explicitly allowed: built (not sent)
    hook.stop()
