"""A burst of failures must reach a channel whose messages have a size limit.

A burst is one message listing up to 30 alerts of up to 300 characters each (a run's
error is often a long API answer): up to ~9,000 characters. Telegram takes 4,096
characters a message, Discord 2,000; Apprise's default for every channel is to pass
the text on untouched ("upstream"), and the service refuses it whole (Telegram:
400 "message is too long"). So the burst that matters most (a dozen failed runs at
once) was never seen: one ``alert_failed`` log line, and silence on the phone.

Telegram's server is played by a stand-in for ``requests.post`` (the one place
Apprise's Telegram plugin talks to the network) that behaves as Telegram does.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import requests

from jupcron.domain import RunStatus
from jupcron.listen.metrics import Metrics
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import Alerts
from jupcron.service.apprise_channel import apprise_sender

TELEGRAM_LIMIT = 4096
BOT = "tgram://123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/987654321"
SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)
RUNS = 20


class FakeTelegram:
    """Takes ``sendMessage`` as api.telegram.org does: refused over 4,096 characters."""

    def __init__(self) -> None:
        self.delivered: list[str] = []
        self.refused = 0

    def post(self, url: str, data: Any = None, **_: Any) -> requests.Response:
        response = requests.Response()
        text = json.loads(data).get("text", "") if data else ""
        if len(text) > TELEGRAM_LIMIT:
            self.refused += 1
            response.status_code = 400
            response._content = json.dumps(
                {"ok": False, "error_code": 400,
                 "description": "Bad Request: message is too long"}
            ).encode()  # fmt: skip
            return response
        self.delivered.append(text)
        response.status_code = 200
        response._content = b'{"ok": true, "result": {}}'
        return response


def failed(run_id: int) -> RunOutcome:
    error = ("quote: Jupiter answered 400 Bad Request: {\"error\": \"Could not find any "
             "route for the given input and output mints with the amount requested; "
             "try a larger amount, another slippage, or check that both mints are "
             "tradable\", \"errorCode\": \"COULD_NOT_FIND_ANY_ROUTE\"}")  # fmt: skip
    return RunOutcome(run_id=run_id, plan_name="dca-sol-weekly", kind="swap",
                      scheduled_for=SLOT, status=RunStatus.FAILED, error=error)  # fmt: skip


def test_a_burst_of_failures_reaches_telegram(monkeypatch: pytest.MonkeyPatch) -> None:
    telegram = FakeTelegram()
    monkeypatch.setattr(requests, "post", telegram.post)
    metrics = Metrics()
    alerts = Alerts(apprise_sender([BOT]), batch=60, min_interval=0,
                    on_result=metrics.record_notifications).start()  # fmt: skip
    for run_id in range(1, RUNS + 1):
        alerts.run_finished(failed(run_id))
    alerts.stop()  # what is pending goes now, as one message

    assert telegram.refused == 0, "the burst was refused whole: nobody saw it"
    said = "\n".join(telegram.delivered)
    for run_id in range(1, RUNS + 1):
        assert f"run {run_id} " in said
    sent = {"event": "failed", "result": "sent"}
    assert metrics.registry.get_sample_value("jupcron_notifications_total", sent) == RUNS
