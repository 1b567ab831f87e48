"""`plans apply`: validate every file first, then sync the store in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from daemon.plans.load import LoadedPlan, LoadResult, load_plans
from daemon.store import plans as store_plans
from daemon.store.engine import transaction
from daemon.store.plans import PlanDiff, PlanInput


def to_input(loaded: LoadedPlan) -> PlanInput:
    spec = loaded.spec
    return PlanInput(
        name=spec.name,
        kind=str(spec.kind),
        schedule=spec.schedule_dict(),
        request=spec.request_dict(),
        settings=spec.settings_dict(),
        enabled=spec.enabled,
        description=spec.description,
        source=loaded.source,
    )


def apply_paths(
    factory: sessionmaker[Session],
    paths: Sequence[Path],
    *,
    now: datetime,
    dry_run: bool = False,
    complete: bool = False,
    loaded: LoadResult | None = None,
) -> tuple[PlanDiff, LoadResult]:
    """Validate `paths`; if all is well, apply (or with `dry_run`, only diff) them.

    Raises `PlanError` with every problem before touching the store. With
    `complete`, the files are the whole desired set: every other plan is
    disabled. Otherwise only plans whose file was scanned or is gone are.
    `loaded`: the result of `load_plans(paths)` if the caller already has it.
    """
    if loaded is None:
        loaded = load_plans(paths)
    loaded.raise_for_problems()
    inputs = [to_input(p) for p in loaded.plans]
    scanned = None if complete else {str(f.resolve()) for f in loaded.files}
    with transaction(factory) as session:
        if dry_run:
            result = store_plans.diff(session, inputs, scanned)
        else:
            result = store_plans.apply(session, inputs, now, scanned)
    return result, loaded
