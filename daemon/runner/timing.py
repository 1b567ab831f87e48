"""How late a run may still act: the plan's grace, and the blockhash's expiry."""

from __future__ import annotations

from datetime import datetime, timedelta

from jupcron.store.records import PlanRecord, RunRecord


def grace_end(run: RunRecord, plan: PlanRecord) -> datetime:
    """The last moment the run's slot (a manual run's: when it was fired) may still be
    acted on (the schedule's grace)."""
    return run.scheduled_for + timedelta(seconds=plan.schedule.grace)


def within_grace(run: RunRecord, plan: PlanRecord, now: datetime) -> bool:
    """Whether the run may still act: its slot's grace, a manual run's counted from when
    it was fired (a `jupcron fire` that died is not ordered by a recovery hours later,
    at whatever the price is then)."""
    return now < grace_end(run, plan)


def surely_expired(run: RunRecord, now: datetime, validity: float) -> bool:
    """Past the stored expiry plus a third of the validity as a margin: the signed
    transaction can no longer land."""
    if run.expires_at is None:
        return True
    return now >= run.expires_at + timedelta(seconds=validity / 3)
