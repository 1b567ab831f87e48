"""A streak of skipped slots that is still going when the daemon stops is summed up in
the last message (`Alerts.stop`), not lost: the skips counted since the first (or the
last summary) were said nowhere else."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from jupcron.service.alerts import Alerts

SLOT = datetime(2026, 12, 1, 9, tzinfo=UTC)


def skipped(plan: str, hour: int) -> RunOutcome:
    return RunOutcome(run_id=hour, plan_name=plan, kind="swap",
                      scheduled_for=SLOT.replace(hour=hour), status=RunStatus.SKIPPED,
                      error="insufficient funds")  # fmt: skip


def test_a_streak_still_going_at_the_stop_is_summed_up_in_the_last_message() -> None:
    sent: list[str] = []
    now = [1000.0]

    def sender(title: str, body: str, severe: bool) -> bool:
        sent.append(body)
        return True

    alerts = Alerts(sender, batch=0, min_interval=0, skip_summary=3600, clock=lambda: now[0])
    for hour in (9, 10, 11):
        alerts.note_run(skipped("dca", hour))
        now[0] += 60
    alerts.note_run(skipped("quiet", 9))  # a streak of one: said already, nothing to sum
    alerts.start()
    alerts.stop()
    said = "\n".join(sent)
    assert "plan dca slot 2026-12-01 09:00:00Z skipped: insufficient funds" in said
    assert "plan dca: 2 more slot(s) skipped since 2026-12-01 09:00:00Z, the last " \
           "2026-12-01 11:00:00Z" in said  # fmt: skip
    assert said.count("quiet") == 1
