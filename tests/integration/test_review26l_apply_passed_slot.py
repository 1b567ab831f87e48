"""An apply that takes a while between its start and its write (its network checks ask
the API; thousands of files to read): a new plan's first slot after the write is
stored, not one that came due meanwhile (a renamed plan's old name fired that one:
`test_review22j_rename_slot`). An `at:` plan whose instant passed meanwhile was
stored with no slot at all, and nothing said so: `NeverFiring` looked at the apply's
start only. The write now reports every new plan that had a fire time after the
apply's start that it will not run (`passed`), the `at:` one with no slot left.

Real SQLite file and PostgreSQL; the real `apply_checked` (what `plans apply` runs)
with the monotonic clock as the seam for the time the checks take."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import NetworkChecks, apply_checked
from jupcron.plans.load import LoadedPlan
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.plansync import Passed
from tests.fixtures.plans import swap_plan, write_plans

BEGAN = datetime(2030, 1, 1, 0, 0, 30, tzinfo=UTC)  # the apply's `now`
CHECKS_TAKE = 45.0  # seconds the network checks take
AT = BEGAN + timedelta(seconds=20)  # passes while the checks ask


class Monotonic:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def at_plan(name: str, at: datetime) -> dict[str, Any]:
    plan = swap_plan(name)
    plan["schedule"] = {"at": at.isoformat()}
    return plan


def stored_next(factory: sessionmaker[Session]) -> dict[str, datetime | None]:
    with transaction(factory) as session:
        plans = {p.id: p.name for p in store_plans.all_plans(session)}
        found = firing.stored_next(session, list(plans))
    return {name: found.get(pid) for pid, name in plans.items()}


def test_a_new_plan_whose_fire_passed_during_the_apply_is_reported(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    folder = tmp_path / "plans"
    write_plans(folder / "a.yaml", [
        at_plan("cancel-at", AT),  # its one instant passes during the apply
        swap_plan("minutely", every="1m"),  # 00:01 passes during the apply
        at_plan("tomorrow", BEGAN + timedelta(days=1)),  # untouched
        swap_plan("hourly", every="1h"),  # no slot between start and write
    ])  # fmt: skip
    monotonic = Monotonic()

    def ask_network(_plans: list[LoadedPlan]) -> None:
        monotonic.now += CHECKS_TAKE

    passed: list[Passed] = []
    apply_checked(plans_factory, [folder], now=BEGAN, complete=True,
                  checks=NetworkChecks(lambda _p: True, ask_network),
                  monotonic=monotonic, passed=passed.append)  # fmt: skip

    written = BEGAN + timedelta(seconds=CHECKS_TAKE)
    source = str(folder / "a.yaml")
    assert sorted(passed, key=lambda p: p.name) == [
        Passed("cancel-at", source, missed=AT, first=None, stored_at=written),
        Passed("minutely", source, missed=datetime(2030, 1, 1, 0, 1, tzinfo=UTC),
               first=datetime(2030, 1, 1, 0, 2, tzinfo=UTC), stored_at=written),
    ]  # fmt: skip
    nexts = stored_next(plans_factory)
    assert nexts["cancel-at"] is None  # stored, and will never run: now said
    assert nexts["minutely"] == datetime(2030, 1, 1, 0, 2, tzinfo=UTC)  # kept (renames)
    assert nexts["tomorrow"] == BEGAN + timedelta(days=1)


def test_a_quick_apply_reports_nothing(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    folder = tmp_path / "plans"
    write_plans(folder / "a.yaml", [at_plan("cancel-at", AT), swap_plan("minutely", every="1m")])
    passed: list[Passed] = []
    apply_checked(plans_factory, [folder], now=BEGAN, complete=True,
                  checks=NetworkChecks(lambda _p: False, lambda _p: None),
                  monotonic=Monotonic(), passed=passed.append)  # fmt: skip
    assert passed == []
    assert stored_next(plans_factory)["cancel-at"] == AT
