"""A reload of many changed plans (`plans apply` after the operator edited one setting
in every plan file) is long: ~18 s for 10,000 plans on SQLite, once ~180 s for
100,000. Two things must hold while it runs:

* the scheduler is alive while the reload settles page after page: `healthy()` (the
  systemd watchdog's ping) counted only the revision polls, which a reload holds up,
  so a reload longer than the health threshold withheld the pings and systemd killed
  the daemon mid-reload (``WatchdogSec=60``); a reload that settles nothing for that
  long is stuck, and still unhealthy;
* a run due meanwhile fires on time: the reload held the scheduler's lock from its
  first page to its last, so every fire (the timer's, and a changed plan's caught-up
  slot handed to the workers) waited for the whole reload, past its grace at scale.

Time is simulated: the scheduler's monotonic clock is the test's, moved on each time
the reload reads a page of changed plans (seen as the SQL it sends to the store)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling import reload as reload_module
from jupcron.scheduling.scheduler import Scheduler
from jupcron.store.engine import transaction
from jupcron.store.models import Plan, Run
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import Fires, clock_at

T0 = datetime(2030, 1, 1, 12, 0, 10, tzinfo=UTC)
PAGE = 50  # plans a reload settles a transaction (SETTLE_PAGE), small to keep it quick
CHANGED_PAGE_SQL = "fire_version != plans.version"  # `firing.changed_page`'s read


def ignore(plan: PlanRecord, slot: datetime) -> None:
    pass


class Ticks:
    """The scheduler's monotonic clock: moved on by the test only."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@contextmanager
def at_each_page_read(hook: Callable[[], None]) -> Iterator[None]:
    """`hook()` each time a reload reads a page of changed plans (in its thread)."""

    def listener(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if CHANGED_PAGE_SQL in statement:
            hook()

    event.listen(Engine, "before_cursor_execute", listener)
    try:
        yield
    finally:
        event.remove(Engine, "before_cursor_execute", listener)


def plan(name: str, amount: int, schedule: dict[str, Any] | None = None) -> dict[str, Any]:
    out = swap_plan(name, every="1d")
    out["request"]["amount"] = amount
    if schedule is not None:
        out["schedule"] = schedule
    return out


def files(plans: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {f"p{k:04d}.yaml": plans[k : k + 100] for k in range(0, len(plans), 100)}


def test_a_reload_settling_page_after_page_is_alive_and_a_stuck_one_is_not(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles,
    monkeypatch: pytest.MonkeyPatch, started: list[Scheduler],
) -> None:  # fmt: skip
    """Four pages of changed plans, each taking 0.6 of the health threshold: alive at
    every page (before: unhealthy from the second on, though the reload was moving).
    Then a page that takes longer than the threshold: unhealthy (stuck)."""
    monkeypatch.setattr(reload_module, "SETTLE_PAGE", PAGE)
    count = 4 * PAGE
    apply_paths(plans_factory, [plan_files(files([plan(f"p{i}", 1_000_000)
                                                  for i in range(count)]))],
                now=T0 - timedelta(minutes=2))  # fmt: skip
    ticks = Ticks()
    scheduler = Scheduler(plans_factory, ignore, poll_interval=3600, clock=clock_at(T0),
                          monotonic=ticks)  # fmt: skip
    started.append(scheduler)
    scheduler.start()
    assert scheduler.healthy()
    threshold = max(3 * 3600, 10.0)  # `healthy()`: three poll intervals, at least 10 s
    # the operator edits one setting in every plan file
    apply_paths(plans_factory, [plan_files(files([plan(f"p{i}", 2_000_000)
                                                  for i in range(count)]))],
                now=T0 - timedelta(minutes=1))  # fmt: skip

    seen: list[bool] = []

    def page_read() -> None:
        reads = len(seen) + 1
        if reads <= 4:  # pages 1 to 4, each read 0.6 threshold after the one before
            ticks.now += 0.6 * threshold
        else:  # the last read (finding no more) came 1.1 threshold after page 4 settled
            ticks.now += 1.1 * threshold
        seen.append(scheduler.healthy())

    with at_each_page_read(page_read):
        diff = scheduler.reload()
    assert diff is not None
    assert diff.counts["changed"] == count
    assert len(seen) == 5, seen
    assert seen[:4] == [True] * 4, f"alive while settling pages: {seen[:4]}"
    assert seen[4] is False, "a reload that settles nothing for the threshold is stuck"
    assert scheduler.healthy()  # the reload finished: the store answered


def test_a_slot_due_during_a_long_reload_fires_while_it_runs(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles,
    monkeypatch: pytest.MonkeyPatch, started: list[Scheduler],
) -> None:  # fmt: skip
    """Plan ``a`` (first by id) is changed to every minute at 11:59:30; the daemon's
    clock reads 12:00:10, so the reload's first page catches up its 12:00 slot (10 s
    late, within grace) and hands it to a worker. It fires while the reload is still
    reading its next pages (before: only after the reload's last page), once."""
    monkeypatch.setattr(reload_module, "SETTLE_PAGE", PAGE)
    count = 3 * PAGE
    names = ["a", *(f"p{i}" for i in range(1, count))]
    apply_paths(plans_factory, [plan_files(files([plan(n, 1_000_000) for n in names]))],
                now=T0 - timedelta(minutes=1, seconds=10))  # fmt: skip
    fires = Fires(plans_factory)
    scheduler = Scheduler(plans_factory, fires, poll_interval=3600, clock=clock_at(T0))
    started.append(scheduler)
    scheduler.start()
    with transaction(plans_factory) as s:
        ids = {name: pid for name, pid in s.execute(select(Plan.name, Plan.id))}
    assert ids["a"] == min(ids.values())  # in the first page
    minutely = {"every": "1m"}
    edited = [plan("a", 1_000_000, minutely), *(plan(n, 2_000_000) for n in names[1:])]
    apply_paths(plans_factory, [plan_files(files(edited))], now=T0 - timedelta(seconds=40))
    slot = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    assert fires.calls == []

    reads: list[bool] = []  # at each page read: had `a`'s 12:00 fired

    def page_read() -> None:
        if not reads:  # the first page: not settled yet
            reads.append(("a", slot) in fires.calls)
        elif len(reads) == 1:  # the second: the first page settled, `a` handed out
            reads.append(fires.wait_for(lambda: ("a", slot) in fires.calls, timeout=10))

    with at_each_page_read(page_read):
        scheduler.reload()
    assert fires.wait_for(lambda: ("a", slot) in fires.calls)
    assert reads == [False, True], "the caught-up slot waited for the whole reload"
    with transaction(plans_factory) as s:
        rows = s.execute(select(Run.scheduled_for).where(Run.plan_id == ids["a"])).all()
    assert [r for (r,) in rows] == [slot]
    assert fires.calls.count(("a", slot)) == 1
