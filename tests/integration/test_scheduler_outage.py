"""A fire that finds the store unavailable (SQLite locked past its busy timeout)
is not dropped: it is tried again, and once the slot's grace has passed it is
recorded as skipped. Real SQLite file, a real second writer holding the lock."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from daemon.plans.apply import apply_paths
from daemon.scheduler import UNAVAILABLE_ERROR, Scheduler
from daemon.store import engine as engine_module
from daemon.store import runs
from daemon.store.engine import make_engine, session_factory, transaction
from daemon.store.models import Run
from daemon.store.records import PlanRecord
from daemon.store.types import RunStatus
from tests.fixtures.plans import PlanFiles, swap_plan


class Fires:
    """The fire callback: claims the slot as the runner does (and fails as it would)."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.factory = factory
        self.fired = threading.Event()

    def __call__(self, plan: PlanRecord, slot: datetime) -> None:
        with transaction(self.factory) as s:
            run_id = runs.claim(s, plan, slot, now=slot)
            if run_id is not None:
                runs.advance(s, run_id, RunStatus.SUCCEEDED, now=slot)
        self.fired.set()


@pytest.fixture
def busy_factory(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[sessionmaker[Session]]:
    monkeypatch.setattr(engine_module, "SQLITE_BUSY_MS", 100)
    engine = make_engine(sqlite_url)
    yield session_factory(engine)
    engine.dispose()


class Lock:
    """Another writer holding SQLite's write lock."""

    def __init__(self, url: str) -> None:
        self.conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)

    def take(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.conn.rollback()
        self.conn.close()


def one_shot(
    factory: sessionmaker[Session], plan_files: PlanFiles, due: datetime, grace: str
) -> None:
    plan = swap_plan("once")
    plan["schedule"] = {"at": due.isoformat(), "grace": grace}
    apply_paths(factory, [plan_files({"a.yaml": [plan]})], now=due - timedelta(minutes=1))


def rows(factory: sessionmaker[Session]) -> list[tuple[datetime, str, Any]]:
    with transaction(factory) as s:
        found = s.execute(select(Run.scheduled_for, Run.status, Run.error))
        return [(a, b, c) for a, b, c in found]


def test_a_fire_the_store_refused_is_retried_until_it_lands(
    busy_factory: sessionmaker[Session], sqlite_url: str, plan_files: PlanFiles
) -> None:
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    one_shot(busy_factory, plan_files, due, grace="1h")
    fires = Fires(busy_factory)
    scheduler = Scheduler(busy_factory, fires, store_retry=0.2, poll_interval=3600)
    lock = Lock(sqlite_url)
    try:
        scheduler.start()
        lock.take()  # the store is unavailable across the due time
        with capture_logs() as logs:
            assert not fires.fired.wait((due - datetime.now(UTC)).total_seconds() + 1.0)
            lock.release()
            assert fires.fired.wait(10)
    finally:
        scheduler.stop(wait=True)
    events = [e["event"] for e in logs]
    assert "fire_store_unavailable" in events
    assert rows(busy_factory) == [(due, "succeeded", None)]


def test_a_fire_the_store_refused_past_its_grace_is_recorded_as_skipped(
    busy_factory: sessionmaker[Session], sqlite_url: str, plan_files: PlanFiles
) -> None:
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    one_shot(busy_factory, plan_files, due, grace="1s")
    fires = Fires(busy_factory)
    missed: list[tuple[str, list[datetime]]] = []
    scheduler = Scheduler(
        busy_factory, fires, store_retry=0.2, poll_interval=3600,
        on_misfire=lambda plan, slots: missed.append((plan.name, slots)),
    )  # fmt: skip
    lock = Lock(sqlite_url)
    try:
        scheduler.start()
        lock.take()
        # held until well after the slot's one second of grace
        fires.fired.wait((due - datetime.now(UTC)).total_seconds() + 2.5)
        lock.release()
        deadline = datetime.now(UTC) + timedelta(seconds=10)
        while not rows(busy_factory) and datetime.now(UTC) < deadline:
            fires.fired.wait(0.1)
    finally:
        scheduler.stop(wait=True)
    assert not fires.fired.is_set()  # never fired late
    assert rows(busy_factory) == [(due, "skipped", UNAVAILABLE_ERROR)]
    assert missed == [("once", [due])]
