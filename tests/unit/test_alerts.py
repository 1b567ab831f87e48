"""Alerts (daemon/service/alerts.py) with a recording sender and a settable clock:
bursts become one message, skips are debounced, events filter, secrets stay out."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime

import pytest

from jupcron.config import NOTIFY_EVENTS, Config, NotifyConfig
from jupcron.domain import RunStatus
from jupcron.errors import ConfigError
from jupcron.listen.metrics import Metrics
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import AlertEvent, Alerts, render
from jupcron.service.apprise_channel import apprise_sender, channel_of
from tests.support.logcapture import captured_logs

SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)


class Recorder:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str, bool]] = []
        self.sent = threading.Event()

    def __call__(self, title: str, body: str, severe: bool) -> bool:
        self.messages.append((title, body, severe))
        self.sent.set()
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def outcome(
    status: RunStatus, plan: str = "dca", run_id: int = 1, error: str | None = None
) -> RunOutcome:
    return RunOutcome(run_id=run_id, plan_name=plan, kind="swap", scheduled_for=SLOT,
                      status=status, error=error)  # fmt: skip


def test_the_event_names_are_the_configs() -> None:
    assert {str(e) for e in AlertEvent} == set(NOTIFY_EVENTS)


def test_a_burst_of_failures_is_one_message() -> None:
    sender = Recorder()
    alerts = Alerts(sender, batch=0.3, min_interval=0)
    for run_id in range(1, 6):
        alerts.note_run(outcome(RunStatus.FAILED, run_id=run_id, error="HTTP 500"))
    alerts.note_run(outcome(RunStatus.SUCCEEDED, run_id=9))  # nothing to say
    alerts.start()
    assert sender.sent.wait(5)
    alerts.stop()
    (title, body, severe) = sender.messages[0]
    assert len(sender.messages) == 1
    assert "5 alerts (5 failed)" in title
    assert severe
    assert body.count("[failed] plan dca run") == 5


def test_skips_are_debounced_the_first_then_a_summary() -> None:
    sender, clock = Recorder(), Clock()
    alerts = Alerts(sender, batch=0, min_interval=0, skip_summary=3600, clock=clock)
    for _ in range(5):
        alerts.note_run(outcome(RunStatus.SKIPPED, error="insufficient funds"))
        clock.now += 60
    queued = [alerts._queue.get_nowait() for _ in range(alerts._queue.qsize())]
    assert [a.text for a in queued] == [
        "plan dca slot 2026-12-01 09:00:00Z skipped: insufficient funds"
    ]
    clock.now += 3600  # a summary once an hour while the streak lasts
    alerts.note_run(outcome(RunStatus.SKIPPED, error="insufficient funds"))
    (summary,) = [alerts._queue.get_nowait() for _ in range(alerts._queue.qsize())]
    assert summary.text.startswith("plan dca: 5 more slot(s) skipped since")
    alerts.note_run(outcome(RunStatus.SKIPPED, error="insufficient funds"))
    alerts.note_run(outcome(RunStatus.SUCCEEDED))  # the streak ends: the rest is summed up
    (ended,) = [alerts._queue.get_nowait() for _ in range(alerts._queue.qsize())]
    assert ended.text.startswith("plan dca: 1 more slot(s) skipped")
    assert ended.text.endswith("(the streak has ended)")


def test_an_operators_pause_is_no_alert_and_events_filter() -> None:
    alerts = Alerts(Recorder(), events=["failed"])
    alerts.note_run(
        outcome(RunStatus.SKIPPED, error="paused: maintenance (by ann; jupcron resume dca)")
    )
    alerts.note_run(outcome(RunStatus.SKIPPED, plan="b", error="insufficient funds"))  # filtered
    alerts.note(AlertEvent.DAEMON_START, "started")  # filtered
    assert alerts._queue.qsize() == 0
    alerts.note_run(outcome(RunStatus.FAILED))
    assert alerts._queue.qsize() == 1


def test_min_interval_holds_the_next_message_back() -> None:
    sender, clock = Recorder(), Clock()
    alerts = Alerts(sender, batch=0, min_interval=60, clock=clock)
    alerts.note(AlertEvent.FAILED, "one")
    alerts.start()
    assert sender.sent.wait(5)
    sender.sent.clear()
    alerts.note(AlertEvent.FAILED, "two")
    alerts.note(AlertEvent.FAILED, "three")
    assert not sender.sent.wait(0.3)  # held: the last message was under a minute ago
    alerts.stop()  # a stop sends what is pending at once
    assert [t for t, _, _ in sender.messages][1].endswith("2 alerts (2 failed)")


def test_reasons_are_masked_and_trimmed() -> None:
    alerts = Alerts(Recorder())
    alerts.note(AlertEvent.FAILED, "bad https://rpc.example/?api-key=s3cr3t-k3y " + "x" * 1000)
    (alert,) = [alerts._queue.get_nowait()]
    assert "s3cr3t-k3y" not in alert.text
    assert len(alert.text) <= 300
    title, body = render([alert], "host")
    assert title.startswith("jupcron (host): bad")
    assert "[failed] bad" in body


def test_notify_urls_are_secrets_everywhere() -> None:
    url = "tgram://123456:AAbot-token/987"
    config = Config(notify=NotifyConfig(urls=[url], events=["failed"]))  # type: ignore[list-item]
    for shown in (repr(config), str(config), config.model_dump_json(), str(config.model_dump())):
        assert "AAbot-token" not in shown
    assert channel_of(url) == "tgram://…"
    with pytest.raises(ConfigError) as caught:
        apprise_sender(["json://127.0.0.1:1/x", "bogus://secret-token@host"])
    assert "notify.urls[1]" in str(caught.value)
    assert "secret-token" not in str(caught.value)


def test_unknown_events_are_a_config_error() -> None:
    with pytest.raises(ValueError, match="unknown event"):
        NotifyConfig(events=["failed", "exploded"])


def test_each_alert_of_a_message_is_counted_sent_or_failed_on_the_metrics() -> None:
    metrics = Metrics()
    answers = iter([True, False])

    def sender(title: str, body: str, severe: bool) -> bool:
        return next(answers)

    def broken(title: str, body: str, severe: bool) -> bool:
        raise RuntimeError("the channel library broke")

    for send in (sender, sender, broken):
        alerts = Alerts(send, batch=0, min_interval=0, on_result=metrics.record_notifications)
        alerts.note(AlertEvent.FAILED, "plan a run 1 failed")
        alerts.note(AlertEvent.LOW_BALANCE, "wallet W: 0 USDC covers 0 runs")
        alerts.start()
        alerts.stop()
    text = metrics.render().decode()
    assert 'jupcron_notifications_total{event="failed",result="sent"} 1.0' in text
    assert 'jupcron_notifications_total{event="low_balance",result="sent"} 1.0' in text
    assert 'jupcron_notifications_total{event="failed",result="failed"} 2.0' in text
    assert 'jupcron_notifications_total{event="low_balance",result="failed"} 2.0' in text


def test_a_mistyped_notify_url_reaches_no_log_line() -> None:
    """Apprise's own "Unparseable URL <url>" error quotes the URL whole: the token of a
    mistyped scheme went to stderr and the journal; ours names position and scheme."""
    token = "SECRETTOKEN"  # (Apprise elides a longer one in its line)
    with captured_logs() as stream, pytest.raises(ConfigError) as caught:
        apprise_sender([f"dicord://1234/{token}"])
    assert "notify.urls[0] (dicord://…)" in str(caught.value)
    assert token not in str(caught.value)
    assert token not in stream.getvalue()
    assert not logging.getLogger("apprise").disabled  # its send errors are still said
