"""`plans apply` writes a new plan settled at its first slot, so a daemon starting on
many new plans rewrites none of them (on PostgreSQL, rewriting 100,000 plan rows to
adopt them took 2.6 s of the start); a running scheduler still reports each added plan
once, by id, and adopts a plan an older apply left unadopted (``fire_version`` NULL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import text, update
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import Scheduler
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan


def ignore(plan: PlanRecord, slot: datetime) -> None:
    pass


def _row_versions(factory: sessionmaker[Session]) -> dict[str, object]:
    """Each plan's row version: PostgreSQL's ``xmin`` (any UPDATE of the row changes
    it); on SQLite, the row's content, which an adoption's UPDATE also changes."""
    with transaction(factory) as s:
        if s.get_bind().dialect.name == "postgresql":
            rows = s.execute(text("SELECT name, xmin::text FROM plans"))
        else:
            rows = s.execute(text("SELECT name, fire_version || '/' || next_fire FROM plans"))
        return {name: version for name, version in rows}


def test_a_start_on_new_plans_rewrites_no_plan_row(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    now = datetime.now(UTC)
    plans = [swap_plan(f"p{i}", every="1d") for i in range(5)]
    apply_paths(plans_factory, [plan_files({"p.yaml": plans})], now=now)
    before = _row_versions(plans_factory)
    scheduler = Scheduler(plans_factory, ignore, poll_interval=3600)
    scheduler.start()
    try:
        assert set(scheduler.next_fires()) == {f"p{i}" for i in range(5)}
        assert _row_versions(plans_factory) == before
    finally:
        scheduler.stop(wait=True)


def test_a_running_scheduler_reports_each_added_plan_once(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    now = datetime.now(UTC)
    folder = plan_files({"a.yaml": [swap_plan("a", every="1d")]})
    apply_paths(plans_factory, [folder], now=now)
    scheduler = Scheduler(plans_factory, ignore, poll_interval=3600)
    scheduler.start()
    try:
        more = [swap_plan("a", every="1d"), swap_plan("b", every="1d"),
                swap_plan("c", every="1d", enabled=False)]  # fmt: skip
        apply_paths(plans_factory, [plan_files({"a.yaml": more})], now=now + timedelta(seconds=1))
        diff = scheduler.reload()
        assert diff is not None
        assert (diff.added, diff.changed, diff.disabled) == (("b",), (), ())
        assert diff.counts == {"added": 1, "changed": 0, "disabled": 0}
        assert scheduler.reload() is None  # reported once
        # added and changed again before the scheduler reloaded: a change of a plan it
        # now knows, and a plan added since, counted as added
        edited = [swap_plan("a", every="1d"), swap_plan("b", every="2d"),
                  swap_plan("d", every="1d")]  # fmt: skip
        apply_paths(plans_factory, [plan_files({"a.yaml": edited})], now=now + timedelta(seconds=2))
        diff = scheduler.reload()
        assert diff is not None
        assert (diff.added, diff.changed) == (("d",), ("b",))
        assert set(scheduler.next_fires()) == {"a", "b", "d"}
    finally:
        scheduler.stop(wait=True)


def test_a_plan_an_older_apply_left_unadopted_is_adopted_and_reported(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    now = datetime.now(UTC)
    apply_paths(plans_factory, [plan_files({"a.yaml": [swap_plan("a", every="1d")]})], now=now)
    scheduler = Scheduler(plans_factory, ignore, poll_interval=3600)
    scheduler.start()
    try:
        apply_paths(plans_factory, [plan_files({"a.yaml": [swap_plan("a", every="1d"),
                                                           swap_plan("old", every="1d")]})],
                    now=now + timedelta(seconds=1))  # fmt: skip
        with transaction(plans_factory) as s:  # as an apply from before 0.x wrote it
            s.execute(update(Plan).where(Plan.name == "old").values(fire_version=None))
        diff = scheduler.reload()
        assert diff is not None
        assert diff.added == ("old",)  # once, though it is both unadopted and new by id
        assert diff.counts["added"] == 1
        with transaction(plans_factory) as s:
            fire_versions = dict(s.execute(text("SELECT name, fire_version FROM plans")).all())
        assert fire_versions == {"a": 1, "old": 1}
        assert set(scheduler.next_fires()) == {"a", "old"}
    finally:
        scheduler.stop(wait=True)
