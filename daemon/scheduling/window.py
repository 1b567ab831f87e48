"""The scheduler's window: the plans due in the next minute or so, in memory by due
time, read from the store a page at a time (``plans.next_fire``, in (next_fire, id)
order). Every other plan is a row in the store, not an object here: memory is
flat in the plan count, and so is the work of a wake-up.

Pages come in slot order, but an entry is due at slot + jitter. An entry read whose
due time is past the read's horizon *waits* outside the window: its plan's record is
let go and only (due, id, slot, version) kept, about 250 bytes, until a later read's
horizon reaches its due time and the record is read again by id. So `CAPACITY`
bounds the entries due within the horizon only: plans waiting out a jitter of hours,
however many, never keep a plan due sooner from being read (they once filled the
window, and plans due after them fired past their grace: missed).

A plan is *live* while its pending slot is in the window: in the heap, or handed to
the workers and not yet started. The cursor is the last (next_fire, id) read:
every settled plan up to it is live, or fired and queued past it (its next slot
is written to the store, where a later page finds it). Pure bookkeeping and
maths, no store, no clock: the scheduler passes `now`.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from jupcron.scheduling.schedule import jitter_delay
from jupcron.store.records import PlanRecord

HORIZON = timedelta(seconds=60)  # a page reads the plans due within this
REFILL_AT = timedelta(seconds=30)  # read on when the cursor is this close to now
CAPACITY = 5_000  # live plans at most (~3 KB each): a larger backlog waits in the store
PAGE = 1_000  # plans a read
PAGES_A_TURN = 5  # reads a turn of the timer (entries that wait do not fill the window)
MAX_SLEEP = 1.0  # seconds, while the window is full (a fire that starts makes room)
FLUSH_EVERY = 1.0  # seconds between writes of the next slots of plans that fired

Cursor = tuple[datetime, int]


class Pending(NamedTuple):
    """A plan's next slot, not yet written to the store (None: the plan is finished)."""

    slot: datetime | None
    version: int
    name: str


def written(pending: Mapping[int, Pending]) -> dict[int, tuple[datetime | None, int]]:
    """What `jupcron.store.firing.set_next` writes of them: {id: (slot, version)}."""
    return {pid: (p.slot, p.version) for pid, p in pending.items()}


@dataclass(frozen=True, eq=False)
class Entry:
    """A plan's pending slot: `due` is the slot plus the plan's stable jitter."""

    plan: PlanRecord
    slot: datetime
    due: datetime


def entry(plan: PlanRecord, slot: datetime) -> Entry:
    return Entry(plan, slot, slot + jitter_delay(plan.schedule, plan.name, slot))


def covered(cursor: Cursor | None, slot: datetime, plan_id: int) -> bool:
    """Is (slot, plan_id) at or before the cursor (a page read it already)?"""
    return cursor is not None and (slot, plan_id) <= cursor


def wants_refill(cursor: Cursor | None, live: int, now: datetime) -> bool:
    """Read the next page: nothing read yet, or the cursor near now, and room left."""
    if live >= CAPACITY:
        return False
    return cursor is None or cursor[0] - now <= REFILL_AT


def sleep_for(
    next_due: datetime | None, cursor: Cursor | None, live: int, now: datetime,
    flush_in: float | None = None,
) -> float:  # fmt: skip
    """Seconds until the next thing to do: a due entry, a refill, a flush; at most
    `MAX_SLEEP` while the window is full (room comes as fires start), never below 0."""
    waits = [] if flush_in is None else [flush_in]
    if next_due is not None:
        waits.append((next_due - now).total_seconds())
    if live >= CAPACITY:
        waits.append(MAX_SLEEP)
    elif cursor is not None:
        waits.append((cursor[0] - REFILL_AT - now).total_seconds())
    else:
        waits.append(0.0)
    return max(0.0, min(waits))


def next_fires(
    stored: dict[str, datetime], pending: Iterable[Pending], live: Iterable[Entry]
) -> dict[str, datetime]:
    """Each plan's next slot, soonest first: as `stored`, unless a next slot is still
    `pending` (held back while its plan's slot is in flight) or live sooner."""
    found = dict(stored)
    for held in pending:
        if held.name not in found:
            continue
        if held.slot is None:
            del found[held.name]
        else:
            found[held.name] = held.slot
    for item in live:
        if item.plan.name in found:
            found[item.plan.name] = min(found[item.plan.name], item.slot)
    return dict(sorted(found.items(), key=lambda kv: kv[1]))


class Waiting(NamedTuple):
    """A plan's pending slot read, but due past the horizon: no record kept."""

    due: datetime
    plan_id: int
    slot: datetime
    version: int


@dataclass
class Window:
    heap: list[tuple[datetime, int, Entry]] = field(default_factory=list)
    live: dict[int, Entry] = field(default_factory=dict)
    cursor: Cursor | None = None
    until: datetime | None = None  # the last read's horizon: entries due later wait
    waiting: dict[int, Waiting] = field(default_factory=dict)
    _later: list[Waiting] = field(default_factory=list)  # a heap, by due time
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def put(self, item: Entry) -> None:
        """Make `item` its plan's pending slot (a stale one left in the heap is skipped)."""
        self.waiting.pop(item.plan.id, None)
        self.live[item.plan.id] = item
        heapq.heappush(self.heap, (item.due, next(self._order), item))

    def place(self, item: Entry) -> bool:
        """`item` live if it is due within the last read's horizon, else waiting (its
        record let go until a read reaches its due time); True if it is live."""
        if self.until is None or item.due < self.until:
            self.put(item)
            return True
        self.wait(Waiting(item.due, item.plan.id, item.slot, item.plan.version))
        return False

    def wait(self, item: Waiting) -> None:
        """The plan's pending slot waits outside the window (not live)."""
        self.live.pop(item.plan_id, None)
        self.waiting[item.plan_id] = item
        heapq.heappush(self._later, item)

    def drop(self, plan_id: int) -> Entry | None:
        """The plan has no pending slot here any more (live or waiting): its live entry."""
        self.waiting.pop(plan_id, None)
        return self.live.pop(plan_id, None)

    def known(self, plan_id: int) -> bool:
        return plan_id in self.live or plan_id in self.waiting

    def ripe(self, until: datetime, limit: int) -> list[Waiting]:
        """Up to `limit` waiting entries due before `until`, soonest first, no longer
        waiting: the caller reads their records (`readmit`), or `wait`s them again."""
        out: list[Waiting] = []
        while self._later and len(out) < limit and self._later[0].due < until:
            item = heapq.heappop(self._later)
            if self.waiting.get(item.plan_id) is item:
                del self.waiting[item.plan_id]
                out.append(item)
        return out

    def readmit(
        self, items: list[Waiting], plans: Iterable[PlanRecord],
        include: Callable[[PlanRecord], bool] | None = None,
    ) -> None:  # fmt: skip
        """Ripe entries live again with their plans' records read by id. One whose plan
        changed or was disabled since stays out: the reload that follows the change
        settles it from the stored next slot (never written past this one). So does one
        whose wallet this daemon no longer leads (its new leader fires it), or whose
        record is gone or unreadable (a page would pass it over too)."""
        found = {p.id: p for p in plans}
        for item in items:
            plan = found.get(item.plan_id)
            if plan is None or plan.version != item.version or not plan.enabled:
                continue
            if include is None or include(plan):
                self.put(entry(plan, item.slot))

    def next_due(self) -> datetime | None:
        while self.heap and self.live.get(self.heap[0][2].plan.id) is not self.heap[0][2]:
            heapq.heappop(self.heap)
        return self.heap[0][0] if self.heap else None

    def pop_due(self, now: datetime) -> list[Entry]:
        """The live entries due at `now`, earliest first; they stay live until started."""
        out = []
        while (due := self.next_due()) is not None and due <= now:
            out.append(heapq.heappop(self.heap)[2])
        return out

    def covers(self, slot: datetime, plan_id: int) -> bool:
        return covered(self.cursor, slot, plan_id)

    def read(
        self, page: list[tuple[PlanRecord, datetime]], limit: int, until: datetime,
        include: Callable[[PlanRecord], bool] | None = None,
        pending: Mapping[int, Pending] | None = None,
    ) -> None:  # fmt: skip
        """A page read from the store (at most `limit` plans due before `until`): plans
        already live or waiting keep their entry, entries due at `until` or later wait,
        plans `include` refuses (another daemon's) are passed over; the cursor moves to
        the page's last plan, or to `until` when the page was not full. A plan with a
        `pending` next slot (not yet written: its handed-over slot may still lack a
        row) is read with that slot, not the stored one it replaces (a caught-up fire
        at start leaves the stale one behind the cursor's first page)."""
        self.until = until
        for plan, slot in page:
            if self.known(plan.id) or (include is not None and not include(plan)):
                continue
            held = pending.get(plan.id) if pending else None
            if held is not None and held.version == plan.version:
                if held.slot is None or held.slot >= until:
                    continue  # finished, or a later page reads it once written
                slot = held.slot
            self.place(entry(plan, slot))
        if len(page) < limit:
            self.cursor = (until, 0)
        else:
            self.cursor = (page[-1][1], page[-1][0].id)

    def reset(self) -> None:
        """Read again from the start (a reload: new plans may be due before the cursor)."""
        self.cursor = None

    def behind(self, written: Mapping[int, Pending]) -> bool:
        """Next slots just written that pages have read past: moves the cursor back to
        just before the first of them, so that the next page reads them; True if it
        moved. A next slot is written only once its plan's fire is back (`_flush` holds
        back the plans in flight), and a run lasts seconds to a minute while the pages
        read on: a slot written behind the cursor was never read, and its plan (an
        ``every: 1m``, a ``* * * * *``) never fired again. Plans read again that are
        live or waiting keep their entry (`read`)."""
        first: Cursor | None = None
        for plan_id, held in written.items():
            if held.slot is None or self.known(plan_id) or not self.covers(held.slot, plan_id):
                continue
            if first is None or (held.slot, plan_id) < first:
                first = (held.slot, plan_id)
        if first is None:
            return False
        self.cursor = (first[0], first[1] - 1)  # the keyset's next page starts at `first`
        return True
