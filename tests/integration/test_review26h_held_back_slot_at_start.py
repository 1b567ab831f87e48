"""A slot held back by a refused fire (the store down, or the wallet's lease lost: its
retry in memory only, the plan's stored next slot never written past it) while later
slots fired, and a daemon killed before that retry: the next start must record it.

`_settle_missed` (the start's first reload) settles such a plan from its stored next
slot (`settle_after`). Two other ways in passed over it (a slot that silently never
happened, no row at all):

* the start's reload failed (the store still refusing writes) and the timer read the
  plan's stale stored slot as a late fire: `_late` settled it after the plan's *latest*
  recorded slot;
* the plan was changed while no daemon ran: the reload recorded the old version's
  unfired slots from the first one after its latest run, not from its stored next slot
  (only a slot held back in this process's memory was honoured).

Real SQLite; another writer holds the lock through the start's reload."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import MISSED_ERROR, Scheduler
from jupcron.scheduling.slots import CHANGED_ERROR
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runs import record_run
from tests.fixtures.scheduler import Fires, clock_at, run_rows
from tests.integration.test_scheduler_outage import Lock

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
S1, S2, S3 = (T0 + timedelta(hours=h) for h in (1, 2, 3))
NOW = S2 + timedelta(minutes=10)  # S2 is past its grace too


@pytest.fixture
def quick_factory(sqlite_url: str) -> Iterator[sessionmaker[Session]]:
    """The store with a short busy timeout: a write behind another writer fails soon."""
    engine = make_engine(sqlite_url, busy_ms=200)
    yield session_factory(engine)
    engine.dispose()


def hourly(amount: int = 1_000_000) -> dict[str, Any]:
    plan: dict[str, Any] = swap_plan("hourly", every="1h")
    plan["schedule"].update({"misfire": "run-once", "grace": "5m"})
    plan["request"]["amount"] = amount
    return plan


def held_back(factory: sessionmaker[Session], plan_files: PlanFiles) -> None:
    """T0 fired; S1 was refused (its retry in memory), S2 fired; the daemon was killed
    before S1's retry: the stored next slot is still S1."""
    apply_paths(factory, [plan_files({"a.yaml": [hourly()]})], now=T0 - timedelta(days=1))
    with transaction(factory) as s:
        record = store_plans.get_plan(s, "hourly")
    assert record is not None
    record_run(factory, record, T0, now=T0, status=RunStatus.SUCCEEDED)
    record_run(factory, record, S2, now=S2, status=RunStatus.SUCCEEDED)
    with transaction(factory) as s:
        firing.set_next(s, {record.id: (S1, record.version)}, settle=True)


def until_next_is(scheduler: Scheduler, slot: datetime) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and scheduler.next_fires().get("hourly") != slot:
        time.sleep(0.05)


def test_a_held_back_slot_is_recorded_when_the_first_reload_failed(
    quick_factory: sessionmaker[Session], sqlite_url: str, plan_files: PlanFiles,
    started: list[Scheduler],
) -> None:  # fmt: skip
    held_back(quick_factory, plan_files)
    lock = Lock(sqlite_url)
    lock.take()  # the start's reload cannot write: it fails, the timer goes on
    at = clock_at(NOW)

    def clock() -> datetime:
        if threading.current_thread().name == "scheduler":
            lock.release()  # the store is back once the timer runs (the reload failed)
        return at()

    fires = Fires(quick_factory)
    scheduler = Scheduler(quick_factory, fires, clock=clock, poll_interval=3600)
    started.append(scheduler)
    try:
        with capture_logs() as logs:
            scheduler.start()
            until_next_is(scheduler, S3)
    finally:
        lock.release()
    assert "plans_reload_failed" in [e["event"] for e in logs]
    assert "fire_late" in [e["event"] for e in logs]
    scheduler.reload()  # the start's reload, at last: the plan's stored slot is past S1 now
    scheduler.stop(wait=True)
    assert fires.calls == []
    assert run_rows(quick_factory) == [
        (T0, "succeeded", None),
        (S1, "skipped", MISSED_ERROR),
        (S2, "succeeded", None),
    ]


def test_a_held_back_slot_is_recorded_when_the_plan_changed_while_down(
    quick_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    held_back(quick_factory, plan_files)
    # `plans apply` of an edited amount while no daemon runs
    apply_paths(quick_factory, [plan_files({"a.yaml": [hourly(2_000_000)]})],
                now=S2 + timedelta(minutes=5))  # fmt: skip
    fires = Fires(quick_factory)
    scheduler = Scheduler(quick_factory, fires, clock=clock_at(NOW), poll_interval=3600)
    started.append(scheduler)
    scheduler.start()
    until_next_is(scheduler, S3)
    scheduler.stop(wait=True)
    assert fires.calls == []
    assert run_rows(quick_factory) == [
        (T0, "succeeded", None),
        (S1, "skipped", CHANGED_ERROR),
        (S2, "succeeded", None),
    ]
