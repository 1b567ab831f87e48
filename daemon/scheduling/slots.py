"""Slots of a plan's previous version that never fired: found and recorded.

When a plan changes (or is disabled) while its pending slot waits behind busy
workers, or while no daemon ran, the new version's catch-up starts at the
change; the old version's slots before it are recorded here as ``skipped``, so
no slot silently has no row. So are the slots of the versions in between (a plan
edited twice while no daemon ran), each up to the change that replaced it.

Bounded as the catch-up is (`jupcron.scheduling.catchup`): at most `MAX_LOOKBACK`
back from `now` and `MAX_SKIPPED` slots for a plan's old versions together, the
newest; the older ones are only flagged (`Recorded.truncated`, the ``truncated``
of the `run_missed` line). Only about that many slots are listed (`newest_slots`),
not every one since the pending slot: an ``every: 1s`` plan changed after a month
away is not a list of millions built with the scheduler's lock held.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from jupcron.scheduling.catchup import MAX_LOOKBACK, MAX_SKIPPED, has_slot, newest_slots
from jupcron.scheduling.schedule import (
    Schedule,
    next_fire_times,
    parse_schedule,
)
from jupcron.store import plans as store_plans
from jupcron.store import runs
from jupcron.store.engine import transaction
from jupcron.store.plans import StoredVersion
from jupcron.store.port import RunStore
from jupcron.store.records import PlanRecord

CHANGED_ERROR = "missed: the plan changed before this slot fired"


def pending_of_previous(
    factory: sessionmaker[Session], plan: PlanRecord
) -> tuple[datetime | None, Schedule | None]:
    """The previous version's schedule and its first slot after the last claimed one
    (None when that version was disabled or its schedule is unreadable)."""
    with transaction(factory) as session:
        last = runs.last_slot(session, plan.id)
        if last is not None and last >= plan.updated_at:
            return None, None  # the old version's slots were all settled
        previous = [c for v, c, on in store_plans.versions(session, plan.name)
                    if v == plan.version - 1 and on]  # fmt: skip
    if not previous or not isinstance(previous[0].get("schedule"), dict):
        return None, None
    try:
        schedule = parse_schedule(previous[0]["schedule"])
    except ValueError:
        return None, None
    upcoming = next_fire_times(schedule, last or plan.created_at, 1)
    return (upcoming[0] if upcoming else None), schedule


@dataclass(frozen=True)
class Recorded:
    """What a call recorded: `skipped` rows written, `slots` handed to the store (those
    with a row already among them: what counts against `MAX_SKIPPED`), and whether
    older slots were left out (`truncated`: beyond `MAX_LOOKBACK` or `MAX_SKIPPED`)."""

    skipped: int = 0
    slots: int = 0
    truncated: bool = False

    def __add__(self, other: Recorded) -> Recorded:
        return Recorded(self.skipped + other.skipped, self.slots + other.slots,
                        self.truncated or other.truncated)  # fmt: skip


def record_unfired(
    store: RunStore,
    plan: PlanRecord,
    schedule: Schedule,
    first: datetime,
    *,
    now: datetime,
    until: datetime | None = None,
    limit: int = MAX_SKIPPED,
) -> Recorded:
    """Record the old version's slots from its pending one (`first`) up to the change
    (`until`, else the plan's last one) as skipped: the newest `limit` of them within
    `MAX_LOOKBACK` of `now`, the rest flagged. Never past `now` (`_came`)."""
    until = _came(plan.updated_at if until is None else until, now)
    if first > until:
        return Recorded()
    floor = now - MAX_LOOKBACK
    if first <= floor:  # the pending slot itself is beyond the look-back
        slots, _ = newest_slots(schedule, floor, until, limit)
        return _skip(store, plan, slots, now, truncated=True)
    slots, more = newest_slots(schedule, first, until, limit)
    if not more and len(slots) < limit:
        slots = [first, *slots]  # (the pending slot: a slot, from a schedule or the store)
    else:
        more = True
    return _skip(store, plan, slots, now, truncated=more)


def _came(change: datetime, now: datetime) -> datetime:
    """Where a version's unfired slots end: at its change, or at `now` if that is
    earlier. A change's time is the applying host's clock (`plans apply` runs on any
    host), which may run ahead of this daemon's: a slot between the two has not come
    here yet, so it is not unfired but the new version's to fire (recorded skipped, the
    unique (plan, slot) key then refused its fire, and an edit made from a host a few
    seconds ahead, a few seconds before a slot, cost that slot's run)."""
    return min(change, now)


def _skip(store: RunStore, plan: PlanRecord, slots: list[datetime], now: datetime, *,
          truncated: bool) -> Recorded:  # fmt: skip
    written = store.skip(plan, slots, now=now, error=CHANGED_ERROR) if slots else []
    return Recorded(len(written), len(slots), truncated)


def previous_version(
    history: Sequence[StoredVersion], version: int
) -> tuple[bool, Schedule | None]:
    """Was the plan enabled at `version` (the one the scheduler settled), and its
    schedule then (None if unreadable). `history`: the plan's versions from that one
    on (`jupcron.store.firing.versions_from`)."""
    found = [v for v in history if v.version == version]
    if not found:
        return False, None
    content, enabled = found[0].content, found[0].enabled
    if not enabled or not isinstance(content.get("schedule"), dict):
        return bool(enabled), None
    try:
        return True, parse_schedule(content["schedule"])
    except ValueError:
        return True, None


@dataclass(frozen=True)
class Superseded:
    """A version the plan had after the one the scheduler settled, before its current
    one, enabled: its schedule, and when it was applied and replaced."""

    schedule: Schedule
    since: datetime
    until: datetime


def superseded(
    plan: PlanRecord, history: Sequence[StoredVersion], settled: int
) -> tuple[datetime, list[Superseded]]:
    """When the version after `settled` was applied (where the settled version's slots
    end), and the enabled versions between that one and the plan's current one.
    `history`: the plan's versions from `settled` on."""
    rows = [v for v in history if settled < v.version <= plan.version]
    if not rows:
        return plan.updated_at, []
    out = []
    for version, after in itertools.pairwise(rows):
        if not version.enabled or not isinstance(version.content.get("schedule"), dict):
            continue
        try:
            schedule = parse_schedule(version.content["schedule"])
        except ValueError:
            continue
        out.append(Superseded(schedule, version.created_at, after.created_at))
    return rows[0].created_at, out


def record_superseded(
    store: RunStore,
    plan: PlanRecord,
    versions: list[Superseded],
    *,
    now: datetime,
    limit: int = MAX_SKIPPED,
) -> Recorded:
    """Record the slots of versions in between that passed while each was in force: the
    newest `limit` of them all (the latest version's first) within `MAX_LOOKBACK` of
    `now`, the rest flagged."""
    floor = now - MAX_LOOKBACK
    done = Recorded()
    for version in reversed(versions):
        schedule, since, until = version.schedule, version.since, _came(version.until, now)
        older = since < floor and has_slot(schedule, since, min(floor, until))
        slots, more = newest_slots(schedule, max(since, floor), until, limit - done.slots)
        done += _skip(store, plan, slots, now, truncated=more or older)
    return done
