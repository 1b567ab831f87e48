"""`plans apply` against a real store (SQLite and PostgreSQL): diff, versions, disable, atomicity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import PlanError
from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store import plansync
from jupcron.store.engine import transaction
from jupcron.store.models import PlanVersion
from tests.fixtures.plans import PlanFiles, cancel_plan, recurring_plan, swap_plan, write_plans

T0 = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)


def snapshot(factory: sessionmaker[Session]) -> tuple[Any, ...]:
    with transaction(factory) as s:
        plans = [
            (p.name, p.version, p.enabled, p.schedule, p.request, p.settings)
            for p in store_plans.all_plans(s)
        ]
        count = s.scalar(select(func.count()).select_from(PlanVersion))
        return (tuple(plans), count, store_plans.revision(s))


def test_apply_add_change_disable_keeps_history(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files(
        {
            "dca.yaml": [recurring_plan("weekly-dca"), cancel_plan("expire-order")],
            "swap.yaml": swap_plan("hourly-swap"),
        }
    )
    diff, _ = apply_paths(plans_factory, [folder], now=T0)
    assert diff.added == ("expire-order", "hourly-swap", "weekly-dca")
    assert diff.lines()[0] == "+ expire-order"
    assert diff.revision == 1

    with transaction(plans_factory) as s:
        record = store_plans.get_plan(s, "hourly-swap")
        assert record is not None
        assert record.version == 1
        assert record.schedule.every == 3600
        assert record.body == {"inputMint": swap_plan("x")["request"]["inputMint"],
                                  "outputMint": swap_plan("x")["request"]["outputMint"],
                                  "amount": 1_000_000}  # fmt: skip
        assert record.settings.dry_run is False

    # change one plan, drop the file of another
    folder = plan_files(
        {
            "dca.yaml": [recurring_plan("weekly-dca"), cancel_plan("expire-order")],
            "swap2.yaml": swap_plan("other-swap", every="15m"),
        }
    )
    write_plans(
        folder / "dca.yaml",
        [recurring_plan("weekly-dca", dry_run=True), cancel_plan("expire-order")],
    )
    diff, _ = apply_paths(plans_factory, [folder], now=T0 + timedelta(hours=1))
    assert diff.added == ("other-swap",)
    assert diff.changed == ("weekly-dca",)
    assert diff.disabled == ("hourly-swap",)
    assert diff.unchanged == ("expire-order",)
    assert diff.revision == 2
    assert "~ weekly-dca (version 2)" in diff.lines()
    assert "- hourly-swap (disabled)" in diff.lines()
    shown = diff.lines(fields=True)  # what changed, field by field, under its plan
    at = shown.index("~ weekly-dca (version 2)")
    assert shown[at + 1] == "    settings.dry_run: false → true", shown

    with transaction(plans_factory) as s:
        names = [p.name for p in store_plans.enabled_plans(s)]
        assert names == ["expire-order", "other-swap", "weekly-dca"]
        gone = store_plans.get_plan(s, "hourly-swap")
        assert gone is not None  # never deleted
        assert gone.enabled is False
        history = store_plans.versions(s, "weekly-dca")
        assert [(v, c["settings"]["dry_run"], e) for v, c, e in history] == [
            (1, False, True),
            (2, True, True),
        ]
        assert [e for _, _, e in store_plans.versions(s, "hourly-swap")] == [True, False]

    # the same files again: nothing changes, not even the revision (daemons need not reload)
    diff, _ = apply_paths(plans_factory, [folder], now=T0 + timedelta(hours=2))
    assert diff.empty
    assert diff.revision == 2

    # the file comes back: the plan is enabled again, as a new version
    write_plans(folder / "swap.yaml", swap_plan("hourly-swap"))
    diff, _ = apply_paths(plans_factory, [folder], now=T0 + timedelta(hours=3))
    assert diff.changed == ("hourly-swap",)
    with transaction(plans_factory) as s:
        again = store_plans.get_plan(s, "hourly-swap")
        assert again is not None
        assert (again.enabled, again.version) == (True, 3)


def test_directory_with_one_broken_file_changes_nothing(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a")], "b.yaml": [swap_plan("b")]})
    apply_paths(plans_factory, [folder], now=T0)
    before = snapshot(plans_factory)

    folder = plan_files(
        {
            "a.yaml": [swap_plan("a", every="5m")],  # would be a change
            "c.yaml": [swap_plan("c")],  # would be an addition; b would be disabled
            "broken.yaml": [swap_plan("d", request={"inputMint": "nope", "amount": 1})],
        }
    )
    with pytest.raises(PlanError) as info:
        apply_paths(plans_factory, [folder], now=T0 + timedelta(hours=1))
    assert any("broken.yaml" in p.file for p in info.value.problems)
    assert snapshot(plans_factory) == before


def test_dry_run_writes_nothing(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a"), swap_plan("b")]})
    before = snapshot(plans_factory)
    diff, _ = apply_paths(plans_factory, [folder], now=T0, dry_run=True)
    assert diff.added == ("a", "b")
    assert diff.revision is None
    assert snapshot(plans_factory) == before


def test_explicit_files_leave_other_files_plans_alone(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a")], "b.yaml": [swap_plan("b")]})
    apply_paths(plans_factory, [folder], now=T0)
    write_plans(folder / "a.yaml", [swap_plan("a2")])
    diff, _ = apply_paths(plans_factory, [folder / "a.yaml"], now=T0 + timedelta(minutes=1))
    # 'a' was in the scanned file and is gone from it; 'b' lives in a file not scanned
    assert diff.added == ("a2",)
    assert diff.disabled == ("a",)
    # complete=True: the given files are the whole set
    diff, _ = apply_paths(
        plans_factory, [folder / "a.yaml"], now=T0 + timedelta(minutes=2), complete=True
    )
    assert diff.disabled == ("b",)


def test_plan_moved_to_another_file_is_not_a_change(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    folder = tmp_path / "p"
    write_plans(folder / "one.yaml", [swap_plan("a")])
    apply_paths(plans_factory, [folder], now=T0)
    (folder / "one.yaml").unlink()
    write_plans(folder / "two.yaml", [swap_plan("a")])
    diff, _ = apply_paths(plans_factory, [folder], now=T0 + timedelta(minutes=1))
    assert diff.empty
    with transaction(plans_factory) as s:
        record = store_plans.get_plan(s, "a")
        assert record is not None
        assert record.version == 1


def test_many_new_plans_each_get_their_first_version(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    """New plans are inserted in batches (`READ_CHUNK` a statement): past a batch's end,
    each one still has exactly its own version 1, with its own content, beside a
    changed plan's version 2 in the same apply."""
    count = plansync.READ_CHUNK * 2 + 3
    apply_paths(plans_factory, [plan_files({"old.yaml": swap_plan("old")})], now=T0)
    changed = swap_plan("old")
    changed["request"]["amount"] = 2_000_000
    many = [swap_plan(f"p-{i:04d}") for i in range(count)]
    folder = plan_files({"old.yaml": changed, "many.yaml": many})
    diff, _ = apply_paths(plans_factory, [folder], now=T0 + timedelta(hours=1))
    assert diff.count("added") == count
    assert diff.added == tuple(f"p-{i:04d}" for i in range(plansync.SHOWN))  # the first by name
    assert diff.lines()[plansync.SHOWN] == f"  … and {count - plansync.SHOWN} more added"
    assert diff.changed == ("old",)
    with transaction(plans_factory) as s:
        rows = s.execute(select(PlanVersion.plan_id, PlanVersion.version, PlanVersion.content))
        by_plan: dict[int, list[tuple[int, str]]] = {}
        for plan_id, version, content in rows:
            by_plan.setdefault(plan_id, []).append((version, content["name"]))
        ids = {r.name: r.id for r in store_plans.all_plans(s)}
    assert sorted(by_plan[ids["old"]]) == [(1, "old"), (2, "old")]
    for i in range(count):
        name = f"p-{i:04d}"
        assert by_plan[ids[name]] == [(1, name)]
    assert sum(len(v) for v in by_plan.values()) == count + 2
