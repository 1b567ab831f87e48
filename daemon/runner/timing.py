"""How late a run may still act: the plan's grace, and the blockhash's expiry."""

from __future__ import annotations

from datetime import datetime, timedelta

from daemon.schedule import parse_schedule
from daemon.store.records import PlanRecord, RunRecord


def grace_of(plan: PlanRecord, default: float) -> float:
    """The plan's schedule grace (seconds): how late a slot may still be acted on."""
    try:
        return float(parse_schedule(plan.schedule).grace)
    except (ValueError, TypeError):
        return default


def within_grace(run: RunRecord, plan: PlanRecord, now: datetime, default: float) -> bool:
    """A manual run has no slot to be late for; a scheduled one has its grace."""
    if run.trigger == "manual":
        return True
    return now < run.scheduled_for + timedelta(seconds=grace_of(plan, default))


def surely_expired(run: RunRecord, now: datetime, validity: float) -> bool:
    """Past the stored expiry plus a third of the validity as a margin: the signed
    transaction can no longer land."""
    if run.expires_at is None:
        return True
    return now >= run.expires_at + timedelta(seconds=validity / 3)
