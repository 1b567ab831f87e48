"""`plans apply` reading its files on worker processes gives what reading them in the
caller gives: the same plans stored, the same problems, warnings and suggestions in
the same order, and nothing written when one file is bad (both backends). The rows
PostgreSQL gets by COPY (`jupcron.store.bulk`) read back as SQLite's by INSERT."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import PlanError
from jupcron.plans.apply import apply_paths
from jupcron.plans.load import LoadResult, stream_plans
from jupcron.plans.readers import MAX_WORKERS, MIN_FILES, workers_for
from jupcron.store.engine import make_engine, session_factory, transaction
from jupcron.store.models import Plan, PlanVersion
from tests.fixtures.plans import PlanFiles, recurring_plan, swap_plan

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def good_files() -> dict[str, Any]:
    return {
        f"f{n}.yaml": [swap_plan(f"swap-{n}-{i}", every=f"{i + 1}h") for i in range(30)]
        + [recurring_plan(f"dca-{n}")]  # Recurring v1: a suggestion to move it
        for n in range(MIN_FILES + 2)
    }


def bad_files() -> dict[str, Any]:
    files = good_files()
    files["f1.yaml"][3]["request"]["amount"] = -5  # a problem
    files["f2.yaml"][0]["colour"] = "red"  # unknown key
    files["f4.yaml"][7]["name"] = "swap-0-1"  # a name used twice, across files
    return files


def seen(result: LoadResult, plans: list[Any]) -> tuple[Any, ...]:
    return (
        [(p.spec.name, p.source, p.line, p.column, p.spec.model_dump()) for p in plans],
        [str(p) for p in result.problems],
        [str(p) for p in result.warnings],
        [str(p) for p in result.suggestions],
        result.files,
    )


def read(folder: Any, workers: int) -> tuple[Any, ...]:
    result = LoadResult()
    plans = [p for batch in stream_plans([folder], result, None, workers) for p in batch]
    return seen(result, plans)


def test_how_many_workers() -> None:
    assert workers_for(MIN_FILES - 1, 3) == 0  # a few files: read in the caller
    assert workers_for(50, 0) == 0
    assert workers_for(50, 2) == 2
    assert workers_for(50, 99) == MAX_WORKERS


@pytest.mark.parametrize("files", [good_files, bad_files])
def test_workers_read_what_the_caller_reads(plan_files: PlanFiles, files: Any) -> None:
    folder = plan_files(files())
    here, there = read(folder, 0), read(folder, 2)
    assert here == there
    plans, problems, _, suggestions, _ = there
    assert len(suggestions) == MIN_FILES + 2
    if files is good_files:
        assert problems == []
        assert len(plans) == 31 * (MIN_FILES + 2)
    else:
        assert [Path(p.split(":")[0]).name for p in problems] == ["f1.yaml", "f2.yaml",
                                                                      "f4.yaml"]  # fmt: skip
        assert "amount" in problems[0]
        assert "colour" in problems[1]
        assert "already used by the plan at" in problems[2]


def stored(factory: sessionmaker[Session]) -> list[tuple[Any, ...]]:
    columns = (Plan.name, Plan.kind, Plan.schedule, Plan.request, Plan.settings, Plan.enabled,
               Plan.content_hash, Plan.version, Plan.next_fire, Plan.source, Plan.wallet)  # fmt: skip
    versions = (Plan.name, PlanVersion.version, PlanVersion.content, PlanVersion.content_hash,
                PlanVersion.enabled, PlanVersion.created_at)  # fmt: skip
    with transaction(factory) as session:
        plans = [tuple(r) for r in session.execute(select(*columns).order_by(Plan.name))]
        joined = select(*versions).join(Plan, Plan.id == PlanVersion.plan_id)
        return plans + [tuple(r) for r in session.execute(joined.order_by(Plan.name))]


def test_an_apply_read_by_workers_stores_what_one_read_here_stores(
    plan_files: PlanFiles,
    plans_factory: sessionmaker[Session],
    sqlite_template: Path,
    tmp_path: Path,
) -> None:
    folder = plan_files(good_files())
    shutil.copy2(sqlite_template, tmp_path / "here.db")  # a second migrated store
    engine = make_engine(f"sqlite:///{tmp_path / 'here.db'}")
    try:
        here_factory = session_factory(engine)
        here, _ = apply_paths(here_factory, [folder], now=NOW, workers=0)
        there, _ = apply_paths(plans_factory, [folder], now=NOW, workers=2)
        assert there.count("added") == here.count("added") == 31 * (MIN_FILES + 2)
        assert there.lines() == here.lines()
        assert stored(plans_factory) == stored(here_factory)
    finally:
        engine.dispose()


def test_a_bad_file_read_by_a_worker_writes_nothing(
    plan_files: PlanFiles, plans_factory: sessionmaker[Session]
) -> None:
    folder = plan_files(bad_files())
    with pytest.raises(PlanError) as caught:
        apply_paths(plans_factory, [folder], now=NOW, workers=2)
    assert len(caught.value.problems) == 3
    assert stored(plans_factory) == []
