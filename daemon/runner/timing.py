"""How late a run may still act: the plan's grace, and the blockhash's expiry."""

from __future__ import annotations

from datetime import datetime, timedelta

from jupcron.scheduling.schedule import jitter_delay
from jupcron.store.records import PlanRecord, RunRecord

MANUAL = "manual"  # a `jupcron fire`: its slot is the moment it was fired, no jitter


def due_at(run: RunRecord, plan: PlanRecord) -> datetime:
    """When the run was due: its slot plus the plan's stable jitter, when the scheduler
    fires it (and counts its lateness from: `is_late`); a manual run's, when it was
    fired. Counting the grace from the bare slot left a jittered run only
    ``grace - jitter`` seconds (a plan may have jitter = grace): an on-time run
    interrupted a moment after it started was skipped by its recovery."""
    if run.trigger == MANUAL:
        return run.scheduled_for
    return run.scheduled_for + jitter_delay(plan.schedule, plan.name, run.scheduled_for)


def grace_end(run: RunRecord, plan: PlanRecord) -> datetime:
    """The last moment the run may still be acted on (the schedule's grace), counted
    from when it was due (`due_at`)."""
    return due_at(run, plan) + timedelta(seconds=plan.schedule.grace)


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
