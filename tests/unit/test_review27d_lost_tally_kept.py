"""The count of dropped alerts survives a message that fails.

docs/notify.md: an alert the full queue cannot take "is logged (`alert_dropped`),
counted as failed ..., and the next message says how many of which events were
lost". The tally was taken (and cleared) when the next message was rendered, whether
or not the channel took it: when that message failed too (the same flaky channel
that filled the queue), the drop of an ``in_doubt`` run's alert was never said by
any later message.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import AlertEvent, Alerts

SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)


class FlakySender:
    """The first send hangs until `release`; the second fails; the rest go out."""

    def __init__(self) -> None:
        self.calls = 0
        self.delivered: list[tuple[str, str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, title: str, body: str, severe: bool) -> bool:
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            assert self.release.wait(10)
        if self.calls == 2:
            return False
        self.delivered.append((title, body))
        return True


def test_the_drop_is_said_by_the_next_message_that_goes_out() -> None:
    sender = FlakySender()
    alerts = Alerts(sender, batch=0, min_interval=0, queue_size=1).start()
    alerts.note(AlertEvent.DAEMON_START, "daemon started")
    assert sender.entered.wait(5)  # the channel hangs in this send
    alerts.note(AlertEvent.SKIPPED, "plan a slot skipped")  # fills the queue
    alerts.note_run(RunOutcome(run_id=7, plan_name="dca", kind="swap", scheduled_for=SLOT,
                               status=RunStatus.IN_DOUBT, error="unsettled"))  # fmt: skip
    assert alerts.dropped == 1
    sender.release.set()  # the skip's message goes next, and fails
    until = time.monotonic() + 5
    while sender.calls < 2 and time.monotonic() < until:  # the failed send is over
        time.sleep(0.01)
    alerts.note(AlertEvent.LEADER_CHANGE, "node-b became the leader")
    alerts.stop()

    later = [body for _, body in sender.delivered[1:]]
    assert any("1 alert(s) dropped" in body and "1 in_doubt" in body for body in later), later
