"""The scheduler's window maths (daemon/scheduling/window.py), as tables of cases:
what a page read covers, when to read the next page, how long to sleep, and the
heap's order with stale entries left behind by a reload."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jupcron.scheduling import window as win
from jupcron.scheduling.schedule import parse_schedule
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import swap_plan

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
S = timedelta(seconds=1)


def plan(pid: int, jitter: int = 0, name: str | None = None) -> PlanRecord:
    spec = swap_plan(name or f"p{pid}", every="1h")
    record = PlanRecord.from_mapping({
        "id": pid, "name": spec["name"], "kind": "swap", "version": 1,
        "schedule": {"every": "1h", "jitter": jitter}, "request": spec["request"],
        "settings": {}, "enabled": True, "description": None, "created_at": T, "updated_at": T,
    })  # fmt: skip
    assert record.schedule == parse_schedule({"every": "1h", "jitter": jitter})
    return record


@pytest.mark.parametrize(
    ("cursor", "slot", "pid", "covered"),
    [
        (None, T, 1, False),  # nothing read yet
        ((T, 5), T, 4, True),  # same slot, lower id: read
        ((T, 5), T, 5, True),  # the cursor itself
        ((T, 5), T, 6, False),  # same slot, higher id: the next page's
        ((T, 5), T - S, 99, True),  # earlier slot
        ((T, 5), T + S, 1, False),  # later slot
        ((T + 60 * S, 0), T + 60 * S, 1, False),  # a page that was not full stops before `until`
        ((T + 60 * S, 0), T + 59 * S, 10**6, True),
    ],
)
def test_what_a_cursor_covers(
    cursor: win.Cursor | None, slot: datetime, pid: int, covered: bool
) -> None:
    assert win.covered(cursor, slot, pid) is covered


@pytest.mark.parametrize(
    ("cursor", "live", "wants"),
    [
        (None, 0, True),  # the first read
        ((T + 60 * S, 0), 0, False),  # read a minute ahead
        ((T + win.REFILL_AT, 0), 0, True),  # the cursor is close: read on
        ((T + win.REFILL_AT + S, 0), 0, False),
        ((T - S, 7), 0, True),  # behind now (a backlog): read on
        ((T - S, 7), win.CAPACITY, False),  # but not past capacity
        (None, win.CAPACITY - 1, True),
    ],
)
def test_when_the_next_page_is_read(cursor: win.Cursor | None, live: int, wants: bool) -> None:
    assert win.wants_refill(cursor, live, T) is wants


@pytest.mark.parametrize(
    ("next_due", "cursor", "live", "flush_in", "sleep"),
    [
        (None, None, 0, None, 0.0),  # nothing read yet: read now
        (None, (T + 60 * S, 0), 0, None, 30.0),  # idle: until the cursor is 30 s ahead
        (T + 5 * S, (T + 60 * S, 0), 0, None, 5.0),  # a plan due in 5 s
        (T - 2 * S, (T + 60 * S, 0), 0, None, 0.0),  # overdue: at once
        (T + 5 * S, (T + 60 * S, 0), 0, 0.25, 0.25),  # next slots to write first
        (T + 5 * S, (T - S, 3), win.CAPACITY, None, win.MAX_SLEEP),  # full: look again soon
        (None, (T - S, 3), 0, None, 0.0),  # a backlog in the store: read now
    ],
)
def test_how_long_the_timer_sleeps(
    next_due: datetime | None, cursor: win.Cursor | None, live: int, flush_in: float | None,
    sleep: float,
) -> None:  # fmt: skip
    assert win.sleep_for(next_due, cursor, live, T, flush_in) == sleep


def test_entries_are_due_at_their_slot_plus_the_plans_stable_jitter() -> None:
    plain, jittered = plan(1), plan(2, jitter=200)
    assert win.entry(plain, T).due == T
    first, again = win.entry(jittered, T), win.entry(jittered, T)
    assert first.due == again.due
    assert T <= first.due <= T + 200 * S
    assert first.slot == T


def test_pop_due_in_due_order_skipping_entries_a_reload_replaced() -> None:
    window = win.Window()
    a, b, c = plan(1), plan(2), plan(3)
    window.put(win.entry(b, T + 2 * S))
    window.put(win.entry(a, T + S))
    stale = win.entry(c, T)
    window.put(stale)
    window.put(win.entry(c, T + 3 * S))  # c changed: its first entry is stale
    assert window.next_due() == T + S
    popped = window.pop_due(T + 2 * S)
    assert [(e.plan.id, e.slot) for e in popped] == [(1, T + S), (2, T + 2 * S)]
    assert set(window.live) == {1, 2, 3}  # live until their fire starts
    assert window.pop_due(T + 2 * S) == []
    assert window.next_due() == T + 3 * S
    window.drop(3)
    assert window.next_due() is None


def test_a_page_read_moves_the_cursor_and_keeps_live_entries() -> None:
    window = win.Window()
    a, b = plan(1), plan(2)
    kept = win.entry(a, T + S)
    window.put(kept)
    until = T + 60 * S
    window.read([(a, T), (b, T + 2 * S)], limit=2, until=until)  # a full page
    assert window.cursor == (T + 2 * S, 2)
    assert window.live[1] is kept  # already live: not replaced by the store's older slot
    window.read([], limit=2, until=until)  # not full: read up to `until`
    assert window.cursor == (until, 0)
    window.reset()
    assert window.cursor is None


def test_a_page_reads_a_plans_pending_next_slot_instead_of_its_stale_stored_one() -> None:
    """A caught-up fire at start is handed over before its plan's next slot is written:
    the first page still finds the stored slot from before the outage."""
    window = win.Window()
    a, b, c, d = plan(1), plan(2), plan(3), plan(4)
    until = T + 60 * S
    pending = {
        1: win.Pending(T + 30 * S, 1, "p1"),  # within the page: live at its pending slot
        2: win.Pending(T + 2 * 3600 * S, 1, "p2"),  # past the page: left to a later page
        3: win.Pending(None, 1, "p3"),  # finished
        4: win.Pending(T + 10 * S, 0, "p4"),  # for an older version: the stored one stands
    }
    stale = T - 86_400 * S
    window.read([(a, stale), (b, stale), (c, stale), (d, stale)], limit=10, until=until,
                pending=pending)  # fmt: skip
    assert {pid: e.slot for pid, e in window.live.items()} == {1: T + 30 * S, 4: stale}
    assert window.cursor == (until, 0)
