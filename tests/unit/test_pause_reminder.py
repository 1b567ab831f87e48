"""Review 18b, lead 4: a pause that goes on is reminded, so a forgotten
`jupcron pause --all` does not stop every run in silence.

A slot skipped by an operator's pause is no alert (the operator knows, today).
Before the fix that stayed true for ever: a pause forgotten after maintenance
skipped every slot of every plan, and the channel never said a word. Now the
skips under one pause (a plan's, or every plan's) are summed up once a day
(`PAUSE_REMIND`), one line per pause however many plans it holds; a resume ends
the count without a word. The sender records; the clock is a parameter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import Alert, AlertEvent, Alerts

SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)
DAY = 86_400.0
ALL = "all plans paused: maintenance (by ann; jupcron resume --all)"
ONE = "paused: price too high (by bob; jupcron resume dca)"


def run(plan: str, hours: float, status: RunStatus, error: str | None) -> RunOutcome:
    return RunOutcome(run_id=int(hours * 10) + len(plan), plan_name=plan, kind="swap",
                      scheduled_for=SLOT + timedelta(hours=hours), status=status,
                      error=error)  # fmt: skip


class Said:
    """Alerts whose queue the test reads (nothing is sent: no thread started)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.alerts = Alerts(lambda t, b, s: True, clock=lambda: self.now)

    def drain(self) -> list[Alert]:
        found = []
        while not self.alerts._queue.empty():
            item = self.alerts._queue.get_nowait()
            assert item is not None
            found.append(item)
        return found


def test_a_pause_of_every_plan_is_reminded_once_a_day_in_one_line() -> None:
    said = Said()
    for hour in range(0, 49):  # two days of hourly slots of three plans, all paused
        for plan in ("a", "b", "c"):
            said.alerts.note_run(run(plan, hour, RunStatus.SKIPPED, ALL))
        if hour == 0:
            assert said.drain() == []  # the operator just paused: no alert
        said.now += 3600.0
    reminders = said.drain()
    assert len(reminders) == 2  # a day, and another: not one per plan, not one per slot
    first = reminders[0]
    assert first.event is AlertEvent.SKIPPED
    assert "all plans paused" in first.text
    assert "jupcron resume --all" in first.text
    assert "since 2026-12-01 09:00:00Z" in first.text


def test_a_resume_ends_the_count_without_a_word() -> None:
    said = Said()
    said.alerts.note_run(run("dca", 0, RunStatus.SKIPPED, ONE))
    said.now += DAY / 2
    said.alerts.note_run(run("dca", 12, RunStatus.SKIPPED, ONE))
    said.now += DAY / 4
    said.alerts.note_run(run("dca", 18, RunStatus.SUCCEEDED, None))  # resumed
    said.now += DAY
    said.alerts.note_run(run("dca", 42, RunStatus.SKIPPED, ONE))  # paused again: a new count
    assert said.drain() == []
    said.now += DAY
    said.alerts.note_run(run("dca", 66, RunStatus.SKIPPED, ONE))
    (reminder,) = said.drain()
    assert "plan dca" in reminder.text
    assert "jupcron resume dca" in reminder.text
    assert "since 2026-12-03 03:00:00Z" in reminder.text
