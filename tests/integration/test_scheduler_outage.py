"""A fire that finds the store unavailable (SQLite locked past its busy timeout)
is not dropped: it is tried again, and once the slot's grace has passed it is
recorded as skipped. Real SQLite file, a real second writer holding the lock."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from jupcron.domain import DEFAULT_WALLET
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import UNAVAILABLE_ERROR, Scheduler
from jupcron.store.engine import make_engine, session_factory
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import Fires, run_rows


@pytest.fixture
def busy_factory(sqlite_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(sqlite_url, busy_ms=100)
    yield session_factory(engine)
    engine.dispose()


class Lock:
    """Another writer holding SQLite's write lock (taken and released from any thread)."""

    def __init__(self, url: str) -> None:
        self.conn: sqlite3.Connection | None = sqlite3.connect(
            url.removeprefix("sqlite:///"), isolation_level=None, check_same_thread=False
        )

    def take(self) -> None:
        assert self.conn is not None
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.conn is not None:
            self.conn.rollback()
            self.conn.close()
            self.conn = None


@pytest.fixture
def lock(sqlite_url: str) -> Iterator[Lock]:
    held = Lock(sqlite_url)
    yield held
    held.release()


def scheduled(factory: sessionmaker[Session], **kwargs: Any) -> tuple[Fires, Scheduler]:
    """A scheduler that tries a refused fire again after 0.2 s, and its fires."""
    fires = Fires(factory)
    return fires, Scheduler(factory, fires, store_retry=0.2, **kwargs)


def one_shot(factory: sessionmaker[Session], plan_files: PlanFiles, grace: str) -> datetime:
    """A plan due two seconds from now; its slot."""
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    plan = swap_plan("once")
    plan["schedule"] = {"at": due.isoformat(), "grace": grace}
    apply_paths(factory, [plan_files({"a.yaml": [plan]})], now=due - timedelta(minutes=1))
    return due


def test_a_fire_the_store_refused_is_retried_until_it_lands(
    busy_factory: sessionmaker[Session], lock: Lock, plan_files: PlanFiles
) -> None:
    due = one_shot(busy_factory, plan_files, grace="1h")
    fires, scheduler = scheduled(busy_factory, poll_interval=3600)
    try:
        scheduler.start()
        lock.take()  # the store is unavailable across the due time
        with capture_logs() as logs:
            wait = (due - datetime.now(UTC)).total_seconds() + 1.0
            assert not fires.wait_for(lambda: bool(fires.calls), timeout=wait)
            lock.release()
            assert fires.wait_for(lambda: bool(fires.claimed), timeout=10)
    finally:
        scheduler.stop(wait=True)
    events = [e["event"] for e in logs]
    assert "fire_store_unavailable" in events
    assert run_rows(busy_factory) == [(due, "succeeded", None)]


def test_a_fire_the_store_refused_past_its_grace_is_recorded_as_skipped(
    busy_factory: sessionmaker[Session], lock: Lock, plan_files: PlanFiles
) -> None:
    due = one_shot(busy_factory, plan_files, grace="1s")
    missed: list[tuple[str, list[datetime]]] = []
    fires, scheduler = scheduled(
        busy_factory, poll_interval=3600,
        on_misfire=lambda plan, slots: missed.append((plan.name, slots)),
    )  # fmt: skip
    try:
        scheduler.start()
        lock.take()
        # held until well after the slot's one second of grace
        time.sleep((due - datetime.now(UTC)).total_seconds() + 2.5)
        lock.release()
        deadline = time.monotonic() + 10
        while not run_rows(busy_factory) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        scheduler.stop(wait=True)
    assert fires.calls == []  # never fired late
    assert run_rows(busy_factory) == [(due, "skipped", UNAVAILABLE_ERROR)]
    assert missed == [("once", [due])]


def test_a_start_the_store_refused_loads_the_plans_once_it_is_back(
    busy_factory: sessionmaker[Session], lock: Lock, plan_files: PlanFiles
) -> None:
    """A leader's first load meeting a store down (PostgreSQL restarting as a daemon
    takes wallets over, found by `make chaos`) does not stop the daemon: the start
    goes on with nothing loaded, and the watch job loads once the store is back."""
    due = one_shot(busy_factory, plan_files, grace="1h")
    fires, scheduler = scheduled(busy_factory, poll_interval=0.3)
    try:
        lock.take()
        with capture_logs() as logs:
            scheduler.start()  # raised StoreBusyError before
            assert scheduler.revision is None  # nothing loaded
            lock.release()
            assert fires.wait_for(lambda: bool(fires.claimed), timeout=10)
    finally:
        scheduler.stop(wait=True)
    events = [e["event"] for e in logs]
    assert "plans_reload_failed" in events
    assert events.index("plans_reload_failed") < events.index("scheduler_started")
    assert run_rows(busy_factory) == [(due, "succeeded", None)]


def test_a_reload_for_wallets_gained_the_store_refused_is_tried_again(
    busy_factory: sessionmaker[Session], lock: Lock, plan_files: PlanFiles
) -> None:
    """Wallets gained need a reload though no plan changed (the revision is the same):
    one the store refused is tried at the watch job's next turn all the same."""
    due = one_shot(busy_factory, plan_files, grace="1h")
    led: set[str] = set()
    fires, scheduler = scheduled(busy_factory, poll_interval=0.3,
                                 include=lambda plan: plan.wallet in led)  # fmt: skip
    try:
        scheduler.start()
        assert scheduler.next_fires() == {}
        lock.take()
        led.add(DEFAULT_WALLET)
        with capture_logs() as logs:
            assert not scheduler.refresh()
            lock.release()
            assert fires.wait_for(lambda: bool(fires.claimed), timeout=10)
    finally:
        scheduler.stop(wait=True)
    assert "plans_reload_failed" in [e["event"] for e in logs]
    assert run_rows(busy_factory) == [(due, "succeeded", None)]
