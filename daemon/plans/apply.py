"""`plans apply`: validate every file first, then sync the store in one transaction."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.load import LoadedPlan, LoadResult, load_plans
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.plans import PlanDiff, PlanInput


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
        wallet=spec.wallet,
    )


def apply_paths(
    factory: sessionmaker[Session],
    paths: Sequence[Path],
    *,
    now: datetime,
    dry_run: bool = False,
    complete: bool = False,
    loaded: LoadResult | None = None,
    wallets: Collection[str] | None = None,
) -> tuple[PlanDiff, LoadResult]:
    """Validate `paths`; if all is well, apply (or with `dry_run`, only diff) them.

    Raises `PlanError` with every problem before touching the store. With
    `complete`, the files are the whole desired set: every other plan is
    disabled. Otherwise only plans whose file was scanned or is gone are.
    `loaded`: the result of `load_plans(paths, wallets)` if the caller already has it;
    `wallets`: the config's wallet names, which every plan's wallet must be one of.
    """
    if loaded is None:
        loaded = load_plans(paths, wallets)
    loaded.raise_for_problems()
    inputs = [to_input(p) for p in loaded.plans]
    scanned = None if complete else {str(f.resolve()) for f in loaded.files}
    with transaction(factory) as session:
        if dry_run:
            result = store_plans.diff(session, inputs, scanned)
        else:
            result = store_plans.apply(session, inputs, now, scanned)
    return result, loaded


@dataclass(frozen=True)
class FilesState:
    """Do the plan files (``plans.dir``) say what the store holds? (`jupcron status`)"""

    folder: str
    in_sync: bool
    diff: list[str] = field(default_factory=list)  # `plans apply`'s lines, were it run now
    problem: str | None = None  # the files could not be read whole (the first problem)

    def text(self) -> str:
        if self.problem is not None:
            return f"{self.folder}: cannot compare: {self.problem}"
        if self.in_sync:
            return f"{self.folder}: in sync with the store"
        return (
            f"{self.folder}: DIFFER from the store ({'; '.join(self.diff)}): the daemon runs "
            "the store's plans until 'jupcron plans apply'"
        )

    def as_json(self) -> dict[str, Any]:
        return {"folder": self.folder, "in_sync": self.in_sync, "diff": self.diff,
                "problem": self.problem}  # fmt: skip


def files_vs_store(
    session: Session, folder: Path, wallets: Collection[str] | None = None
) -> FilesState:
    """Compare ``plans.dir`` with the store without writing (a read-only diff)."""
    if not folder.is_dir():
        return FilesState(str(folder), False, problem="no such folder")
    loaded = load_plans([folder], wallets)
    if loaded.problems:
        return FilesState(str(folder), False, problem=str(loaded.problems[0]))
    result = store_plans.diff(session, [to_input(p) for p in loaded.plans], None)
    return FilesState(str(folder), result.empty, diff=result.lines())
