"""A reload settles changed plans a page at a time, reading each page's versions in one
query and taking the scheduler's lock a page at a time. Over pages that mix plans
changed once, edited twice, disabled, and settled at different versions, every slot
an old version left unfired is recorded once, as skipped, and every plan is settled at
its current version with its next slot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling import reload as reload_module
from jupcron.scheduling.scheduler import MISSED_ERROR, Scheduler
from jupcron.scheduling.slots import CHANGED_ERROR
from jupcron.store import firing
from jupcron.store.engine import transaction
from jupcron.store.models import Plan, Run
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.scheduler import Fires, clock_at

T = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
HOURLY, HALF_PAST = {"every": "1h"}, {"cron": "30 * * * *"}
KINDS = ("once", "twice", "off", "late", "same")  # interleaved by id: pages mix them


def at(minutes: int) -> datetime:
    return T + timedelta(minutes=minutes)


def version(name: str, schedule: dict[str, Any], amount: int, on: bool = True) -> dict[str, Any]:
    plan = swap_plan(name)
    plan["schedule"] = dict(schedule)
    plan["request"]["amount"] = amount
    plan["enabled"] = on
    return plan


def apply(factory: sessionmaker[Session], plan_files: PlanFiles, plans: list[dict[str, Any]],
          minutes: int) -> None:  # fmt: skip
    apply_paths(factory, [plan_files({"a.yaml": plans})], now=at(minutes))


def test_changed_plans_over_many_pages_are_each_settled_once(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles,
    monkeypatch: pytest.MonkeyPatch, started: list[Scheduler],
) -> None:  # fmt: skip
    """v1 hourly from 07:30 (first slot 08:00), settled at 07:40, then nobody ran; at
    09:45 a daemon starts. once: another amount at 09:10 (08:00, 09:00 recorded).
    twice: half past at 08:10, another amount at 09:20 (v1's 08:00 and v2's 08:30
    recorded; v3's 09:30 missed, 15 min late). off: disabled at 09:10 (08:00, 09:00
    recorded). late: settled at v3 (amounts at 07:35, 07:40), another amount at 09:10.
    same: unchanged, its 08:00 and 09:00 missed."""
    monkeypatch.setattr(reload_module, "SETTLE_PAGE", 4)
    names = [f"{kind}{i}" for i in range(3) for kind in KINDS]
    v1 = [version(n, HOURLY, 1) for n in names]
    apply(plans_factory, plan_files, v1, -90)
    late = [version(n, HOURLY, 2 if n.startswith("late") else 1) for n in names]
    apply(plans_factory, plan_files, late, -85)
    late = [version(n, HOURLY, 3 if n.startswith("late") else 1) for n in names]
    apply(plans_factory, plan_files, late, -80)
    with transaction(plans_factory) as s:  # a daemon settled them at 07:40, then stopped
        rows = s.execute(select(Plan.id, Plan.name, Plan.version)).all()
        firing.set_next(s, {pid: (at(-60), v) for pid, _, v in rows}, settle=True)
    ids = {name: pid for pid, name, _ in rows}

    def now(name: str, at_minutes: int) -> dict[str, Any]:
        """The plan as the files say at 08:10, 09:10, 09:20."""
        kind = name.rstrip("0123456789")
        if kind == "twice":
            return version(name, HALF_PAST, 1 if at_minutes < 20 else 2)
        if at_minutes < 10:
            return version(name, HOURLY, 3 if kind == "late" else 1)
        if kind == "off":
            return version(name, HOURLY, 1, on=False)
        return version(name, HOURLY, {"once": 2, "late": 4}.get(kind, 1))

    for minutes in (-50, 10, 20):
        apply(plans_factory, plan_files, [now(n, minutes) for n in names], minutes)

    fires = Fires(plans_factory)
    scheduler = Scheduler(plans_factory, fires, poll_interval=3600, clock=clock_at(at(45)))
    started.append(scheduler)
    scheduler.start()
    scheduler.stop(wait=True)
    assert fires.calls == []

    with transaction(plans_factory) as s:
        runs = s.execute(select(Run.plan_id, Run.scheduled_for, Run.status, Run.error)).all()
        plans = {pid: (v, fv, nf) for pid, v, fv, nf in s.execute(
            select(Plan.id, Plan.version, Plan.fire_version, Plan.next_fire))}  # fmt: skip
    got: dict[str, list[tuple[datetime, str | None]]] = {n: [] for n in names}
    by_id = {pid: name for name, pid in ids.items()}
    for pid, slot, status, error in runs:
        assert status == "skipped"
        got[by_id[pid]].append((slot, error))
    expected = {
        "once": [(at(-60), CHANGED_ERROR), (at(0), CHANGED_ERROR)],
        "twice": [(at(-60), CHANGED_ERROR), (at(-30), CHANGED_ERROR), (at(30), MISSED_ERROR)],
        "off": [(at(-60), CHANGED_ERROR), (at(0), CHANGED_ERROR)],
        "late": [(at(-60), CHANGED_ERROR), (at(0), CHANGED_ERROR)],
        "same": [(at(-60), MISSED_ERROR), (at(0), MISSED_ERROR)],
    }
    for name in names:
        assert sorted(got[name]) == expected[name.rstrip("0123456789")], name
        v, fire_version, next_fire = plans[ids[name]]
        assert fire_version == v, name
        want = None if name.startswith("off") else at(90) if name.startswith("twice") else at(60)
        assert next_fire == want, name
