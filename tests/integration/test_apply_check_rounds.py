"""`apply_checked`: the plans to ask about are found in a pass that is rolled back,
asked with no transaction open, then the files applied in one more pass. A plan the
store changed in between (another apply) is asked about in its turn; a store that
keeps changing gives up with nothing applied. Real SQLite file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import PlanError, Problem, StoreBusyError
from jupcron.plans.apply import CHECK_ROUNDS, NetworkChecks, apply_checked, apply_paths
from jupcron.plans.load import LoadedPlan
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.daemon import swap_plan
from tests.fixtures.plans import write_plans

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def factory(sqlite_factory: sessionmaker[Session]) -> sessionmaker[Session]:
    """The suite's migrated SQLite file (`sqlite_factory`)."""
    return sqlite_factory


def write(path: Path, *plans: dict[str, Any]) -> Path:
    return write_plans(path, list(plans))


def applied_x(tmp_path: Path, factory: sessionmaker[Session]) -> Path:
    """A plans folder holding plan ``x`` (every hour), applied; the folder."""
    folder = tmp_path / "plans"
    write(folder / "a.yaml", swap_plan("x", {"every": "1h"}))
    apply_paths(factory, [folder], now=NOW)
    return folder


def stored(factory: sessionmaker[Session]) -> dict[str, tuple[int, str]]:
    with transaction(factory) as session:
        return {p.name: (p.version, p.schedule.describe()) for p in store_plans.all_plans(session)}


def test_a_plan_changed_by_another_apply_during_the_checks_is_asked_about_too(
    tmp_path: Path, factory: sessionmaker[Session]
) -> None:
    folder = applied_x(tmp_path, factory)
    write(folder / "b.yaml", swap_plan("new", {"every": "1h"}))
    other = write(tmp_path / "other" / "a.yaml", swap_plan("x", {"every": "2h"}))
    asked: list[list[str]] = []

    def run(plans: list[LoadedPlan]) -> None:
        asked.append([p.spec.name for p in plans])
        if len(asked) == 1:  # another apply lands while this one asks the network
            apply_paths(factory, [other], now=NOW)

    diff, _ = apply_checked(factory, [folder], checks=NetworkChecks(lambda _p: True, run),
                            now=NOW)  # fmt: skip
    assert asked == [["new"], ["x"]]
    assert (diff.count("added"), diff.count("changed")) == (1, 1)
    versions = {name: version for name, (version, _) in stored(factory).items()}
    assert versions == {"x": 3, "new": 1}  # x as the files say, after the other's v2


def test_a_refusal_or_a_store_that_keeps_changing_applies_nothing(
    tmp_path: Path, factory: sessionmaker[Session]
) -> None:
    folder = applied_x(tmp_path, factory)
    before = stored(factory)
    write(folder / "a.yaml", swap_plan("x", {"every": "3h"}))

    def refuse(plans: list[LoadedPlan]) -> None:
        raise PlanError([Problem(plans[0].source, plans[0].line, 1, "refused")])

    with pytest.raises(PlanError, match="refused"):
        apply_checked(factory, [folder], checks=NetworkChecks(lambda _p: True, refuse), now=NOW)
    assert stored(factory) == before

    # each time the checks ask, another apply changes a plan the files hold unchanged:
    # a plan not asked about in the content the files give it, each pass
    ys = [swap_plan(f"y{n}", {"every": "1h"}) for n in range(CHECK_ROUNDS)]
    write(folder / "y.yaml", *ys)
    apply_paths(factory, [folder / "y.yaml"], now=NOW)
    turns = iter(range(CHECK_ROUNDS))

    def meddle(plans: list[LoadedPlan]) -> None:
        n = next(turns)
        apply_paths(factory, [write(tmp_path / "other" / f"y{n}.yaml",
                                    swap_plan(f"y{n}", {"every": "5h"}))], now=NOW)  # fmt: skip

    before = stored(factory)
    with pytest.raises(StoreBusyError, match="kept changing"):
        apply_checked(factory, [folder], checks=NetworkChecks(lambda _p: True, meddle), now=NOW)
    after = stored(factory)
    assert after["x"] == before["x"]  # the files' edit not applied
    assert [after[f"y{n}"][0] for n in range(CHECK_ROUNDS)] == [2] * CHECK_ROUNDS  # the other's
