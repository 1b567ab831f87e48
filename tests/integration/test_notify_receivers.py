"""Notifications through Apprise to real local receivers: an SMTP server and an HTTP
(JSON) endpoint on loopback. A burst of failures is one message on each channel."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.config import NotifyConfig
from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import AlertEvent, Alerts, alerts_from_config
from jupcron.service.apprise_channel import apprise_sender
from tests.fixtures.receivers import HttpReceiver, SmtpReceiver, wait_for

SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)


def failed(run_id: int) -> RunOutcome:
    return RunOutcome(run_id=run_id, plan_name="weekly", kind="swap", scheduled_for=SLOT,
                      status=RunStatus.FAILED, error="HTTP 500: upstream")  # fmt: skip


def test_a_burst_is_one_message_by_mail_and_by_json(
    smtp_receiver: SmtpReceiver, http_receiver: HttpReceiver
) -> None:
    alerts = Alerts(apprise_sender([smtp_receiver.url, http_receiver.url]), batch=0.5,
                    min_interval=0).start()  # fmt: skip
    for run_id in range(1, 8):
        alerts.note_run(failed(run_id))
    assert wait_for(lambda: smtp_receiver.mails and http_receiver.bodies)
    alerts.stop()
    assert len(smtp_receiver.mails) == 1
    assert len(http_receiver.bodies) == 1
    (subject,) = smtp_receiver.subjects()
    assert "7 alerts (7 failed)" in subject
    (body,) = http_receiver.bodies
    assert body["type"] == "failure"
    assert body["message"].count("[failed] plan weekly run") == 7


def test_the_config_builds_the_channels_and_a_stop_sends_what_is_pending(
    http_receiver: HttpReceiver,
) -> None:
    notify = NotifyConfig(urls=[http_receiver.url], events=["daemon_stop"], batch=60)  # type: ignore[list-item]
    alerts = alerts_from_config(notify)
    assert alerts is not None
    alerts.start()
    alerts.note(AlertEvent.DAEMON_FATAL, "not asked for")
    alerts.note(AlertEvent.DAEMON_STOP, "daemon on host stopped")
    alerts.stop()  # at once, not after the 60 s batch
    assert http_receiver.titles() == ["jupcron (" + alerts.source + "): daemon on host stopped"]
    assert alerts_from_config(NotifyConfig()) is None
