"""Misfires: the slots of a plan that passed while nobody fired them, settled by its
misfire policy (``misfire: skip`` records every missed slot as skipped; ``run-once``
coalesces them into one run of the latest, if it is at most ``grace`` late counted
from when it was due, its slot plus its jitter). A slot still waiting out its jitter
is not missed: it is the plan's next slot."""

from __future__ import annotations

from collections import deque
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
    returned, and only about that many are listed (`newest_slots`, back from `now`):
    an ``every: 1s`` plan after a month away is not a list of millions built with
    the scheduler's lock held.
    """
    now = aware(now)
    lower = aware(since)
    if last_slot is not None and aware(last_slot) > lower:
        lower = aware(last_slot)
    floor = now - MAX_LOOKBACK
    truncated = False
    if lower < floor:
        truncated = has_slot(schedule, lower, floor)
        lower = floor
    # only the newest MAX_SKIPPED missed slots are kept, and one more run-once may run
    keep = MAX_SKIPPED + 1
    # the slots within the jitter of `now` may still be waiting: listed on their own,
    # up to the first that is; the ones before are due, the newest of them listed
    jittered = schedule.jitter > 0 and key is not None
    due_by = now - timedelta(seconds=schedule.jitter) if jittered else now
    recent, waiting, more = _due_before_waiting(schedule, key, max(lower, due_by), now, keep)
    older, older_more = newest_slots(schedule, lower, due_by, keep - len(recent))
    missed = older + recent
    run = None
    if (
        schedule.misfire == Misfire.RUN_ONCE
        and missed
        and not is_late(schedule, key, missed[-1], now)
    ):
        run = missed.pop()
    if len(missed) > MAX_SKIPPED or more or older_more:
        truncated = True
        missed = missed[-MAX_SKIPPED:]
    return CatchUp(run=run, skipped=missed, truncated=truncated, waiting=waiting)


def has_slot(schedule: Schedule, after: datetime, until: datetime) -> bool:
    """Whether `schedule` has a fire time in ``(after, until]``."""
    first = next_fire_times(schedule, after, 1)
    return bool(first) and first[0] <= until


def newest_slots(
    schedule: Schedule, after: datetime, until: datetime, count: int
) -> tuple[list[datetime], bool]:
    """The newest `count` fire times in ``(after, until]`` (ascending), and whether there
    are older ones in it. Listed from spans back from `until` that double (the first
    holds `count` slots of an ``every``, a minute each of a cron), not from `after`:
    some `count` to `2 * count` slots of a regular schedule."""
    if count <= 0:
        return [], has_slot(schedule, after, until)
    span = timedelta(seconds=schedule.every or 60) * count
    while True:
        lower = after if span >= until - after else until - span
        slots = fire_times_between(schedule, lower, until)
        if len(slots) > count:
            return slots[-count:], True
        if lower <= after:
            return slots, False
        span *= 2


def _due_before_waiting(
    schedule: Schedule, key: str | None, after: datetime, now: datetime, keep: int
) -> tuple[list[datetime], datetime | None, bool]:
    """The slots in ``(after, now]`` (within the jitter of `now`: those alone are hashed)
    due at `now`, up to the first one not yet due: the newest `keep` of them (and whether
    there were more), and that one. Listed a span at a time (`keep` slots of an
    ``every``, a minute each of a cron), each hashed as it comes (a month of jitter of
    an every-second plan is not one list)."""
    due: deque[datetime] = deque(maxlen=keep)
    seen = 0
    span = timedelta(seconds=schedule.every or 60) * keep
    while after < now:
        until = min(after + span, now)
        for slot in fire_times_between(schedule, after, until):
            if slot + jitter_delay(schedule, key, slot) > now:
                return list(due), slot, seen > keep
            due.append(slot)
            seen += 1
        after = until
    return list(due), None, seen > keep
