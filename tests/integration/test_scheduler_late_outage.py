"""A fire that starts late (past its grace: the only worker was busy) while the store
is unavailable: its slot is not lost, and its plan goes on firing. Before, the late
path's store error died in the worker's future (nothing logged or recorded) and the
plan, its popped entry still live, never fired again. Real SQLite (a second writer
holding the lock) and real PostgreSQL (the cluster stopped)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import Scheduler
from jupcron.store.engine import make_engine, session_factory, transaction
from jupcron.store.models import Plan, Run
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import Fires
from tests.integration.test_scheduler_outage import Lock
from tests.support.pgcluster import PgCluster

pytestmark = pytest.mark.slow  # a few slots of two plans, on the real clock

EVERY = 5  # seconds between slots; grace 1 s


def two_plans(factory: sessionmaker[Session], plan_files: PlanFiles) -> None:
    """`blocker` and `victim`, due at the same instants (the blocker fires first)."""
    schedule = {"every": f"{EVERY}s", "grace": "1s"}
    apply_paths(factory, [plan_files({"a.yaml": [
        swap_plan("blocker", schedule=dict(schedule)),
        swap_plan("victim", schedule=dict(schedule)),
    ]})], now=datetime.now(UTC))  # fmt: skip


def rows_by_plan(url: str) -> dict[str, list[tuple[datetime, str, str | None]]]:
    engine = make_engine(url)
    try:
        with transaction(session_factory(engine)) as s:
            rows = s.execute(
                select(Plan.name, Run.scheduled_for, Run.status, Run.error)
                .join(Plan, Plan.id == Run.plan_id)
                .order_by(Run.scheduled_for)
            ).all()
    finally:
        engine.dispose()
    found: dict[str, list[tuple[datetime, str, str | None]]] = {"blocker": [], "victim": []}
    for name, slot, status, error in rows:
        found[name].append((slot, status, error))
    return found


def run_outage(
    factory: sessionmaker[Session], down: Callable[[], None], up: Callable[[], None]
) -> list[str]:
    """The blocker's first fire takes the store down and holds the one worker 2.5 s, so
    the victim's fire of that slot starts late with the store down; the store is back
    4 s later; two more slots follow. The warning and error events logged."""
    fires = Fires(factory)
    outage = threading.Event()

    def fire(plan: PlanRecord, slot: datetime) -> None:
        fires(plan, slot)
        if plan.name == "blocker" and not outage.is_set():
            outage.set()
            down()
            time.sleep(2.5)  # ... and the victim's fire, queued behind, is now late

    scheduler = Scheduler(factory, fire, workers=1, poll_interval=3600, store_retry=0.5)
    with capture_logs() as logs:
        try:
            scheduler.start()
            assert outage.wait(EVERY * 3)
            time.sleep(4)
            up()
            time.sleep(EVERY * 2 + 2)
        finally:
            scheduler.stop()
    return [e["event"] for e in logs if e.get("log_level") in ("warning", "error")]


def assert_not_lost(found: dict[str, list[tuple[datetime, str, str | None]]]) -> None:
    blocker = [slot for slot, _, _ in found["blocker"]]
    victim = {slot: status for slot, status, _ in found["victim"]}
    assert len(blocker) >= 3, found  # the blocker went on firing after the outage
    assert victim.get(blocker[0]) == "skipped", f"the victim's late slot: {found}"
    fired = [slot for slot in blocker[1:] if victim.get(slot) == "succeeded"]
    assert len(fired) >= 1, f"the victim stopped firing: {found}"
    assert len(victim) >= len(blocker) - 1, found


def test_a_late_fire_the_locked_store_refused_is_recorded_and_its_plan_fires_on(
    sqlite_url: str, plan_files: PlanFiles
) -> None:
    engine = make_engine(sqlite_url, busy_ms=100)
    factory = session_factory(engine)
    two_plans(factory, plan_files)
    lock = Lock(sqlite_url)
    try:
        events = run_outage(factory, lock.take, lock.release)
    finally:
        lock.release()
        engine.dispose()
    assert "fire_late" in events
    assert "fire_store_unavailable" in events  # said, not lost in a worker's future
    assert_not_lost(rows_by_plan(sqlite_url))


@pytest.mark.postgres
def test_a_late_fire_during_a_postgresql_outage_is_recorded_and_its_plan_fires_on(
    pg_cluster: PgCluster, pg_url: str, plan_files: PlanFiles
) -> None:
    engine = make_engine(pg_url)
    factory = session_factory(engine)
    two_plans(factory, plan_files)
    stopped = threading.Event()

    def down() -> None:
        stopped.set()
        pg_cluster.stop("fast")

    def up() -> None:
        pg_cluster.start()
        stopped.clear()

    try:
        events = run_outage(factory, down, up)
    finally:
        if stopped.is_set():  # never leave the session's cluster down
            pg_cluster.start()
        engine.dispose()
    assert "fire_late" in events
    assert "fire_store_unavailable" in events
    assert_not_lost(rows_by_plan(pg_url))
