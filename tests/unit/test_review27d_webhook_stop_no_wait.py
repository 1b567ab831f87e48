"""A webhook stop that has no time left must not close the client under its thread.

The daemon's stop gives the webhook what is left of ``runner.shutdown_timeout``
(`max(0.0, deadline - now)`): after a slow stop (a run still in flight at the
deadline, a reload that took its time) that is 0 s. `stop` then closed the HTTP
client while the delivery thread was still posting the queued messages (a run that
just failed, a misfire): the thread's next post raised ``RuntimeError: Cannot send a
request, as the client has been closed`` (a raw traceback in the journal), and the
messages left were neither sent nor counted (``jupcron_webhook_notifications_total``
has ``dropped`` for exactly this: "never tried (... or the daemon stopping)"). The
daemon still runs for seconds after (its alerts get at least 5 s): time enough to
deliver them.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import httpx
import pytest

from jupcron.service.webhook import Notification, WebhookNotifier


def test_a_stop_without_time_left_delivers_in_the_background(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crashes: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
    results: list[str] = []
    posted = threading.Event()

    def receiver(request: httpx.Request) -> httpx.Response:
        posted.set()
        time.sleep(0.2)  # a receiver that takes its time
        return httpx.Response(200)

    notifier = WebhookNotifier(
        "http://127.0.0.1:9/hook", transport=httpx.MockTransport(receiver),
        on_result=lambda event, result: results.append(result),
    ).start()  # fmt: skip
    now = datetime.now(UTC)
    for n in range(3):
        assert notifier.send(Notification.misfire(f"plan-{n}", now, now))
    assert posted.wait(5)  # the first is being posted
    notifier.stop(timeout=0.0)  # no time left: the daemon's stop after a slow wait

    deadline = time.monotonic() + 5
    while len(results) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert crashes == []
    assert results == ["sent", "sent", "sent"]
