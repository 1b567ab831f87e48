"""The window's entries that wait out their jitter (review 18g), and the catch-up's
slot not yet due: pure maths, real PlanRecords and schedules.

A page read in slot order puts an entry live only if it is due within the read's
horizon; one due later waits (no record kept) and does not count against
`CAPACITY`, so a full window never holds an entry due after one it keeps out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jupcron.scheduling import window as win
from jupcron.scheduling.catchup import catch_up
from jupcron.scheduling.schedule import jitter_delay, parse_schedule
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import swap_plan

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
S = timedelta(seconds=1)
H = timedelta(hours=1)


def plan(pid: int, jitter: str, version: int = 1, enabled: bool = True) -> PlanRecord:
    spec = swap_plan(f"p{pid}")
    schedule = {"every": "1d", "jitter": jitter, "grace": "12h"}
    return PlanRecord.from_mapping({
        "id": pid, "name": spec["name"], "kind": "swap", "version": version,
        "schedule": schedule, "request": spec["request"], "settings": {},
        "enabled": enabled, "description": None, "created_at": T, "updated_at": T,
    })  # fmt: skip


def delay(record: PlanRecord, slot: datetime) -> timedelta:
    return jitter_delay(record.schedule, record.name, slot)


def long_jitter_plans(count: int, first_id: int = 1) -> list[PlanRecord]:
    """Plans whose jitter at T is more than the horizon (all wait)."""
    out: list[PlanRecord] = []
    pid = first_id
    while len(out) < count:
        record = plan(pid, "12h")
        if delay(record, T) > 2 * win.HORIZON:
            out.append(record)
        pid += 1
    return out


def test_a_page_of_entries_due_past_the_horizon_waits_and_leaves_the_room() -> None:
    window = win.Window()
    waiting = long_jitter_plans(win.CAPACITY + 10)
    plain = plan(10**6, "0s")
    until = T + win.HORIZON
    window.read([(p, T) for p in waiting], len(waiting) + 1, until)
    window.read([(plain, T + 5 * S)], 1000, until)
    assert set(window.live) == {plain.id}  # the one due sooner is in
    assert len(window.waiting) == len(waiting)
    assert window.pop_due(T + 5 * S)[0].plan is plain
    # the same page read again (a reload's reset) leaves them as they are
    window.reset()
    window.read([(p, T) for p in waiting], len(waiting) + 1, until)
    assert len(window.waiting) == len(waiting)
    assert set(window.live) == {plain.id}


def test_ripe_entries_come_back_soonest_first_with_their_slot() -> None:
    window = win.Window()
    plans = long_jitter_plans(5)
    window.read([(p, T) for p in plans], 10, T + win.HORIZON)
    by_due = sorted(plans, key=lambda p: delay(p, T))
    second_due = T + delay(by_due[1], T)
    ripe = window.ripe(second_due + S, limit=10)
    assert [w.plan_id for w in ripe] == [p.id for p in by_due[:2]]
    assert window.ripe(second_due + S, limit=10) == []  # taken once
    window.readmit(ripe, by_due[:2])
    assert set(window.live) == {by_due[0].id, by_due[1].id}
    assert [e.slot for e in window.live.values()] == [T, T]
    assert window.live[by_due[0].id].due == T + delay(by_due[0], T)
    # at most `limit` at a time
    assert len(window.ripe(T + 13 * H, limit=2)) == 2


def test_a_ripe_entry_whose_plan_changed_or_was_dropped_stays_out() -> None:
    window = win.Window()
    a, b, c = long_jitter_plans(3)
    window.read([(a, T), (b, T), (c, T)], 10, T + win.HORIZON)
    window.drop(c.id)  # a reload settled it
    ripe = window.ripe(T + 13 * H, limit=10)
    assert {w.plan_id for w in ripe} == {a.id, b.id}
    changed = plan(a.id, "12h", version=2)
    window.readmit(ripe, [changed, b])
    assert set(window.live) == {b.id}
    assert not window.known(a.id)
    assert not window.known(c.id)


def test_an_entry_queued_past_the_horizon_waits() -> None:
    window = win.Window()
    record = long_jitter_plans(1)[0]
    window.read([], 10, T + win.HORIZON)
    assert window.place(win.entry(record, T)) is False
    assert window.known(record.id)
    assert record.id not in window.live
    assert window.drop(record.id) is None
    assert not window.known(record.id)


def test_a_slot_not_yet_due_is_not_missed_but_waits() -> None:
    schedule = parse_schedule({"every": "1h", "jitter": "3h", "grace": "3h", "misfire": "skip"})
    slots = [T + k * H for k in range(4)]
    now = slots[-1] + S

    def dues_of(name: str) -> dict[datetime, datetime]:
        return {s: s + jitter_delay(schedule, name, s) for s in slots}

    # a plan with a slot due (missed) before one not yet due
    name = next(n for n in (f"p{i}" for i in range(1000))
                if dues_of(n)[slots[0]] <= now < dues_of(n)[slots[1]])  # fmt: skip
    dues = dues_of(name)
    result = catch_up(schedule, T - S, since=T - H, now=now, key=name)
    assert result.waiting == slots[1]
    assert result.skipped == [slots[0]]
    assert all(dues[s] <= now for s in result.skipped)
    # no jitter: nothing waits
    plain = parse_schedule({"every": "1h", "misfire": "skip"})
    assert catch_up(plain, T - S, since=T - H, now=now, key=name).waiting is None
