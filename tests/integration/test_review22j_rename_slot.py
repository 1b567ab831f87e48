"""A plan renamed (the same content under a new name: a new plan id, the old one
disabled) by an apply that takes a while between its start and its write (its
network checks ask the API about the added plan; thousands of files to read): a slot
of the plan that comes due meanwhile is fired by the daemon under the old name (the
store still has it enabled), and the renamed plan must not be stored with that same
slot as its first one (the scheduler would fire it again, up to ``grace`` late: two
orders for one slot of what the operator sees as one plan).

`apply_paths` stored a new plan's first slot as the first after `now`, the instant
the apply began; the old plan is disabled only when the apply writes. The unique
(plan, slot) key does not help: the ids differ. Real SQLite file and PostgreSQL; the
daemon's claim is the real `SqlRunStore.claim`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import RunStatus
from jupcron.plans.apply import NetworkChecks, apply_checked, apply_paths
from jupcron.plans.load import LoadedPlan
from jupcron.store import firing
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.plans import swap_plan, write_plans

BEGAN = datetime(2030, 1, 1, 0, 0, 30, tzinfo=UTC)  # the apply's `now`
SLOT = datetime(2030, 1, 1, 0, 1, tzinfo=UTC)  # the old plan's next slot
CHECKS_TAKE = 45.0  # seconds the network checks take: SLOT passes meanwhile


class Monotonic:
    """A monotonic clock the test moves (the time the apply's checks take)."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _plan(factory: sessionmaker[Session], name: str) -> PlanRecord:
    with transaction(factory) as session:
        (found,) = [p for p in store_plans.all_plans(session) if p.name == name]
    return found


def test_a_renamed_plan_does_not_get_the_slot_its_old_name_fired_during_the_apply(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    folder = tmp_path / "plans"
    write_plans(folder / "a.yaml", [swap_plan("old-name", every="1m")])
    apply_paths(plans_factory, [folder], now=BEGAN - timedelta(hours=1), complete=True)
    old = _plan(plans_factory, "old-name")
    write_plans(folder / "a.yaml", [swap_plan("new-name", every="1m")])  # renamed
    store = SqlRunStore(plans_factory.kw["bind"], group_commit=False)
    monotonic = Monotonic()
    fired: list[datetime] = []

    def ask_network(plans: list[LoadedPlan]) -> None:
        assert [p.spec.name for p in plans] == ["new-name"]
        monotonic.now += CHECKS_TAKE
        # meanwhile SLOT comes due: the daemon fires the plan under its old name
        run = store.claim(old, SLOT, now=SLOT + timedelta(seconds=1), trigger="schedule",
                          claimed_by="daemon")  # fmt: skip
        assert run is not None
        assert run.status is RunStatus.PENDING
        fired.append(run.scheduled_for)

    apply_checked(plans_factory, [folder], now=BEGAN, complete=True,
                  checks=NetworkChecks(lambda _p: True, ask_network),
                  monotonic=monotonic)  # fmt: skip
    assert fired == [SLOT]
    assert not _plan(plans_factory, "old-name").enabled
    new = _plan(plans_factory, "new-name")
    with transaction(plans_factory) as session:
        first = firing.stored_next(session, [new.id])[new.id]
    assert first > SLOT, "the renamed plan would fire the slot its old name just fired"
    assert first == SLOT + timedelta(minutes=1)  # and skips no slot after the write
