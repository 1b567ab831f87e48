"""`plans apply` beside a running daemon: the files are read and checked, and compared
with the store, before the apply takes the write lock (SQLite) or any row lock
(PostgreSQL), so a run due meanwhile is claimed and its plan advanced on time. The
apply stays one transaction, and one that finds the store's plans changed since it
read them applies nothing (`apply_paths`) or reads again (`apply_checked`).

"The daemon" here writes as the runner does (`SqlRunStore.claim`, `set_next`), on an
engine that does not wait for a lock (SQLite ``busy_timeout`` 0, PostgreSQL
``lock_timeout``): what an apply holds at that moment, it would have to wait out.
Real SQLite file and PostgreSQL cluster."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import StoreBusyError
from jupcron.plans import apply as plans_apply
from jupcron.plans.apply import NetworkChecks, apply_checked, apply_paths
from jupcron.plans.load import LoadedPlan
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from jupcron.store.models import Plan
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.daemon import swap_plan

NOW = datetime(2030, 1, 1, tzinfo=UTC)
SLOT = NOW + timedelta(hours=1)


def write(path: Path, *plans: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"plans": list(plans)}))
    return path


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def factory(engine: Engine) -> sessionmaker[Session]:
    return session_factory(engine)


@pytest.fixture
def impatient(db_url: str) -> Iterator[Engine]:
    """The daemon's writer, unwilling to wait for a lock another connection holds."""
    if db_url.startswith("sqlite"):
        engine = make_engine(db_url, busy_ms=0)
    else:
        engine = make_engine(db_url, connect_args={"options": "-c lock_timeout=200"})
    yield engine
    engine.dispose()


def plan(factory: sessionmaker[Session], name: str) -> PlanRecord:
    with transaction(factory) as session:
        found = store_plans.get_plan(session, name)
    assert found is not None
    return found


def stored(factory: sessionmaker[Session]) -> dict[str, tuple[int, str, bool]]:
    with transaction(factory) as session:
        return {p.name: (p.version, p.schedule.describe(), p.enabled)
                for p in store_plans.all_plans(session)}  # fmt: skip


def two_files(folder: Path, x_every: str) -> None:
    """x in a.yaml (read first), y in b.yaml (read after a.yaml was compared)."""
    write(folder / "a.yaml", swap_plan("x", {"every": x_every}))
    write(folder / "b.yaml", swap_plan("y", {"every": "1h"}))


class Daemon:
    """Claims x's slot and advances x while the apply is reading b.yaml."""

    def __init__(self, impatient: Engine, x: PlanRecord) -> None:
        self.store = SqlRunStore(impatient, group_commit=False)
        self.x = x
        self.claimed: list[Any] = []
        self.errors: list[StoreBusyError] = []

    def each(self, loaded: LoadedPlan) -> None:
        if loaded.spec.name != "y" or self.claimed or self.errors:
            return
        try:
            self.claimed.append(self.store.claim(self.x, SLOT, now=NOW, trigger="schedule",
                                                 claimed_by="node-a"))  # fmt: skip
            self.store.set_next({self.x.id: (SLOT + timedelta(hours=1), self.x.version)})
        except StoreBusyError as exc:
            self.errors.append(exc)


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_run_due_while_the_apply_reads_the_files_is_claimed_and_advanced_at_once(
    tmp_path: Path, factory: sessionmaker[Session], impatient: Engine, dry_run: bool
) -> None:
    folder = tmp_path / "plans"
    two_files(folder, "1h")
    apply_paths(factory, [folder], now=NOW, complete=True)
    two_files(folder, "2h")  # x changes: the apply writes it before it reads b.yaml
    daemon = Daemon(impatient, plan(factory, "x"))

    diff, _ = apply_paths(factory, [folder], now=NOW, complete=True, dry_run=dry_run,
                          each=daemon.each)  # fmt: skip

    assert daemon.errors == []  # neither the claim nor the advance waited for the apply
    assert len(daemon.claimed) == 1
    assert daemon.claimed[0] is not None
    assert diff.changed == ("x",)
    assert diff.count("unchanged") == 1
    expected = (1, "every 1h", True) if dry_run else (2, "every 2h", True)
    assert stored(factory)["x"] == expected
    # the slot stays claimed exactly once
    again = SqlRunStore(impatient, group_commit=False).claim(
        daemon.x, SLOT, now=NOW, trigger="schedule", claimed_by="node-b"
    )
    assert again is None


def another_apply_lands_while_y_is_read(
    tmp_path: Path, factory: sessionmaker[Session]
) -> tuple[Path, Callable[[LoadedPlan], None]]:
    """The plans folder (x every 1h applied, its files now saying 2h), and an `each`
    hook that lands another apply (y every 3h, from another file) while y is read."""
    folder = tmp_path / "plans"
    two_files(folder, "1h")
    apply_paths(factory, [folder], now=NOW, complete=True)
    two_files(folder, "2h")
    other = write(tmp_path / "other" / "a.yaml", swap_plan("y", {"every": "3h"}))
    landed: list[bool] = []

    def each(loaded: LoadedPlan) -> None:
        if loaded.spec.name == "y" and not landed:
            apply_paths(factory, [other], now=NOW)
            landed.append(True)

    return folder, each


def test_an_apply_that_finds_the_plans_changed_since_it_read_them_applies_nothing(
    tmp_path: Path, factory: sessionmaker[Session]
) -> None:
    folder, each = another_apply_lands_while_y_is_read(tmp_path, factory)
    with pytest.raises(StoreBusyError, match="changed while"):
        apply_paths(factory, [folder], now=NOW, complete=True, each=each)
    # the other apply's y stands; nothing of this one (x unchanged, y not back)
    assert stored(factory) == {"x": (1, "every 1h", True), "y": (2, "every 3h", True)}


def test_apply_checked_reads_again_when_the_plans_changed_since_it_read_them(
    tmp_path: Path, factory: sessionmaker[Session]
) -> None:
    folder, each = another_apply_lands_while_y_is_read(tmp_path, factory)
    never = NetworkChecks(lambda _p: False, lambda _p: None)
    diff, _ = apply_checked(factory, [folder], checks=never, now=NOW, complete=True,
                            each=each)  # fmt: skip

    # read again over the other apply's y: both plans as the files say, one version on
    assert stored(factory) == {"x": (2, "every 2h", True), "y": (3, "every 1h", True)}
    assert set(diff.changed) == {"x", "y"}


def test_more_changes_than_kept_aside_are_written_as_read_all_in_one_transaction(
    tmp_path: Path, factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `KEPT` added or changed plans the apply takes the lock and writes as it
    reads (memory stays flat); a bad file after that still applies nothing."""
    monkeypatch.setattr(plans_apply, "KEPT", 2)
    folder = tmp_path / "plans"
    for n in range(4):
        write(folder / f"p{n}.yaml", *(swap_plan(f"p{n}-{i}", {"every": "1h"}) for i in range(2)))
    write(folder / "p9.yaml", swap_plan("bad", {"every": "never"}))

    with pytest.raises(Exception, match=r"p9\.yaml"):
        apply_paths(factory, [folder], now=NOW, complete=True)
    assert stored(factory) == {}

    (folder / "p9.yaml").unlink()
    diff, _ = apply_paths(factory, [folder], now=NOW, complete=True)
    assert diff.count("added") == 8
    write(
        folder / "p0.yaml", swap_plan("p0-0", {"every": "2h"}), swap_plan("p0-1", {"every": "1h"})
    )
    (folder / "p3.yaml").rename(folder / "moved.yaml")  # same plans, another file
    diff, _ = apply_paths(factory, [folder], now=NOW, complete=True)
    assert (diff.changed, diff.count("unchanged"), diff.count("disabled")) == (("p0-0",), 7, 0)
    plans = stored(factory)
    assert plans["p0-0"] == (2, "every 2h", True)
    assert plans["p3-1"] == (1, "every 1h", True)
    with transaction(factory) as session:
        sources = dict(session.execute(select(Plan.name, Plan.source)).all())
    assert sources["p3-0"] == sources["p3-1"] == str(folder / "moved.yaml")


def test_a_plan_moved_to_another_file_while_an_apply_reads_is_read_again(
    tmp_path: Path, factory: sessionmaker[Session]
) -> None:
    """Another apply that only moves x to another file (same content: no diff line)
    still changes the store under the read: x's file must end as this apply's files
    say (a.yaml), not as the other left it."""
    folder = tmp_path / "plans"
    two_files(folder, "1h")
    apply_paths(factory, [folder], now=NOW, complete=True)
    other = write(tmp_path / "other" / "c.yaml", swap_plan("x", {"every": "1h"}))
    landed: list[bool] = []

    def each(loaded: LoadedPlan) -> None:
        if loaded.spec.name == "y" and not landed:
            apply_paths(factory, [other], now=NOW)  # x moved to other/c.yaml
            landed.append(True)

    never = NetworkChecks(lambda _p: False, lambda _p: None)
    apply_checked(factory, [folder], checks=never, now=NOW, complete=True, each=each)
    with transaction(factory) as session:
        source = session.scalars(select(Plan.source).where(Plan.name == "x")).one()
    assert landed
    assert source is not None
    assert source.endswith("plans/a.yaml"), source
