"""Misfires: the slots of a plan that passed while nobody fired them, settled by its
misfire policy (``misfire: skip`` records every missed slot as skipped; ``run-once``
coalesces them into one run of the latest, if it is at most ``grace`` late counted
from when it was due, its slot plus its jitter). A slot still waiting out its jitter
is not missed: it is the plan's next slot."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import datetime, timedelta

from jupcron.scheduling.schedule import (
    Misfire,
    Schedule,
    aware,
    fire_times_between,
    is_late,
    jitter_delay,
    next_fire_times,
)

# catch-up never looks back further than this, nor records more skipped slots
MAX_LOOKBACK = timedelta(days=31)
MAX_SKIPPED = 1000


@dataclass(frozen=True)
class CatchUp:
    """What to do about fire times that passed while nobody fired them."""

    run: datetime | None
    skipped: list[datetime]
    truncated: bool = False  # older missed slots (beyond MAX_LOOKBACK/MAX_SKIPPED) left out
    waiting: datetime | None = None  # the first slot not yet due (its jitter): the next one


def catch_up(
    schedule: Schedule,
    last_slot: datetime | None,
    since: datetime,
    now: datetime,
    *,
    key: str | None = None,
) -> CatchUp:
    """Settle the slots in ``(max(last_slot, since), now]`` by the misfire policy.

    `last_slot` is the newest slot already claimed for the plan (None: never
    ran); `since` is when the plan (this version) became active; `key` is the
    plan's jitter key (its name): the latest slot's grace is counted from when it
    was due (slot + jitter), as `is_late` counts it for a running daemon, so a
    start just after a jittered slot was due still runs it. A slot not yet due at
    `now` (slot + jitter after it) is not missed at all: the first such is `waiting`,
    the plan's next slot, to fire when due as if nobody had stopped; only the slots
    before it are settled here (the later ones are settled after it, as they come).
    Slots older than 31 days are not looked at; at most 1000 skipped slots are
    returned.
    """
    now = aware(now)
    lower = aware(since)
    if last_slot is not None and aware(last_slot) > lower:
        lower = aware(last_slot)
    floor = now - MAX_LOOKBACK
    truncated = False
    if lower < floor:
        first = next_fire_times(schedule, lower, 1)
        truncated = bool(first) and first[0] <= floor
        lower = floor
    missed = fire_times_between(schedule, lower, now)
    missed, waiting = _split_waiting(schedule, key, missed, now)
    run = None
    if (
        schedule.misfire == Misfire.RUN_ONCE
        and missed
        and not is_late(schedule, key, missed[-1], now)
    ):
        run = missed.pop()
    if len(missed) > MAX_SKIPPED:
        truncated = True
        missed = missed[-MAX_SKIPPED:]
    return CatchUp(run=run, skipped=missed, truncated=truncated, waiting=waiting)


def _split_waiting(
    schedule: Schedule, key: str | None, slots: list[datetime], now: datetime
) -> tuple[list[datetime], datetime | None]:
    """`slots` (ascending) before the first one not yet due at `now`, and that one.
    Only the slots within the jitter of `now` can still be waiting: those alone are
    hashed (a month of an every-second plan is not)."""
    if schedule.jitter <= 0 or key is None:
        return slots, None
    start = bisect.bisect_right(slots, now - timedelta(seconds=schedule.jitter))
    for i in range(start, len(slots)):
        if slots[i] + jitter_delay(schedule, key, slots[i]) > now:
            return slots[:i], slots[i]
    return slots, None
