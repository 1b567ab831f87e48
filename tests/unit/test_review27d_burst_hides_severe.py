"""A severe alert in a long burst is listed, not counted away among the skips.

A message lists the first 30 alerts of a burst and counts the rest ("… and 11 more
(jupcron audit)"). When the burst began with skips (40 plans skipped at 09:00, their
wallet short of funds) and an ``in_doubt`` run ended in it, the in_doubt run came
41st: the title counted "1 in_doubt", but which plan, which run, and why was behind
"and 11 more", in the one message meant to make the operator act on it.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import Alerts

SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)


class Recorder:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str, bool]] = []
        self.sent = threading.Event()

    def __call__(self, title: str, body: str, severe: bool) -> bool:
        self.messages.append((title, body, severe))
        self.sent.set()
        return True


def outcome(plan: str, run_id: int, status: RunStatus, error: str) -> RunOutcome:
    return RunOutcome(run_id=run_id, plan_name=plan, kind="swap", scheduled_for=SLOT,
                      status=status, error=error)  # fmt: skip


def test_an_in_doubt_run_behind_forty_skips_is_listed() -> None:
    sender = Recorder()
    alerts = Alerts(sender, batch=0.3, min_interval=0)
    for n in range(40):
        alerts.note_run(outcome(f"dca-{n:02d}", n + 1, RunStatus.SKIPPED, "insufficient funds"))
    alerts.note_run(outcome("big-buy", 99, RunStatus.IN_DOUBT, "blockhash expired unsettled"))
    alerts.start()
    assert sender.sent.wait(5)
    alerts.stop()

    (title, body, severe), *_ = sender.messages
    assert "1 in_doubt" in title
    assert severe
    assert "[in_doubt] plan big-buy run 99" in body, body
    assert "… and 11 more (jupcron audit)" in body  # still 30 lines, the rest counted
