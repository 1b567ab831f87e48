"""Review 18b, lead 2: an alert the notifier's full queue cannot take is not silent.

The queue fills while the channel hangs in a send (Apprise waits on a slow
Telegram, say) and a burst of runs ends meanwhile. Before the fix the alert that
did not fit (an ``in_doubt`` run's, here) was only a log line: the channel never
said it, and ``jupcron_notifications_total`` never counted it. Now it is counted
(as not delivered) and the next message says how many of which events were lost.
The sender is the seam (a recording function that holds its first send)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.listen.metrics import Metrics
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import AlertEvent, Alerts

SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)


class HeldSender:
    """Records each message; the first send hangs until `release` (a slow channel)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str, bool]] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, title: str, body: str, severe: bool) -> bool:
        self.entered.set()
        assert self.release.wait(10)
        self.messages.append((title, body, severe))
        return True


def in_doubt(run_id: int) -> RunOutcome:
    return RunOutcome(run_id=run_id, plan_name="dca", kind="swap", scheduled_for=SLOT,
                      status=RunStatus.IN_DOUBT, error="blockhash expired unsettled")  # fmt: skip


def test_an_alert_dropped_on_a_full_queue_is_counted_and_said_next() -> None:
    sender = HeldSender()
    metrics = Metrics()
    alerts = Alerts(sender, batch=0, min_interval=0, queue_size=2,
                    on_result=metrics.record_notifications).start()  # fmt: skip
    alerts.note(AlertEvent.DAEMON_START, "daemon started")
    assert sender.entered.wait(5)  # the channel hangs in this send
    alerts.note(AlertEvent.SKIPPED, "plan a slot skipped")
    alerts.note(AlertEvent.SKIPPED, "plan b slot skipped")  # the queue is full now
    alerts.note_run(in_doubt(7))  # does not fit
    assert alerts.dropped == 1
    sender.release.set()
    alerts.stop()

    counted = {"event": "in_doubt", "result": "failed"}  # not delivered
    assert metrics.registry.get_sample_value("jupcron_notifications_total", counted) == 1
    assert len(sender.messages) >= 2, "no message after the drop"
    title, body, severe = sender.messages[1]
    assert "1 in_doubt" in body  # said where the operator reads
    assert "dropped" in body
    assert "dropped" in title
    assert severe  # an in_doubt lost is the severe kind of message
