"""A changed plan whose stored row no longer parses (a later release reads a stored
schedule more strictly, a hand edit) is settled as having no slot, and the reload goes
on with the other plans. On SQLite the page of changed plans is read by the scheduler's
reader, which cannot write (``query_only``): settling the unreadable plan there failed
every reload, so no change of any plan was ever picked up again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import Scheduler
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from jupcron.store.records import PlanRecord
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import clock_at

T0 = datetime(2030, 1, 1, 12, 0, 10, tzinfo=UTC)


def ignore(plan: PlanRecord, slot: datetime) -> None:
    pass


def test_an_unreadable_changed_plan_does_not_stop_the_reload(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    apply_paths(plans_factory, [plan_files({"a.yaml": [swap_plan("bad"), swap_plan("good")]})],
                now=T0 - timedelta(minutes=2))  # fmt: skip
    scheduler = Scheduler(plans_factory, ignore, poll_interval=3600, clock=clock_at(T0))
    scheduler.start()
    try:
        edited = [swap_plan("bad", every="2h"), swap_plan("good", every="2h")]
        apply_paths(plans_factory, [plan_files({"a.yaml": edited})],
                    now=T0 - timedelta(minutes=1))  # fmt: skip
        with transaction(plans_factory) as s:  # no longer parses
            s.execute(update(Plan).where(Plan.name == "bad").values(schedule={"every": "x"}))
        diff = scheduler.reload()
        assert diff is not None
        assert diff.changed == ("good",)
        with transaction(plans_factory) as s:
            rows = s.execute(select(Plan.name, Plan.version, Plan.fire_version, Plan.next_fire))
            settled = {name: (fire == version, slot) for name, version, fire, slot in rows}
        assert settled["bad"] == (True, None)  # settled as having no slot
        assert settled["good"][0]
        assert settled["good"][1] is not None
        assert scheduler.reload() is None  # and nothing is left to settle
    finally:
        scheduler.stop(wait=True)
