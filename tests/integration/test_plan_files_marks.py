"""`jupcron status` says whether ``plans.dir`` is in sync with the store by the files'
stats, recorded by the last complete `plans apply` (`jupcron.store.planfiles`): a file
is read only when its stat changed, and a changed, added or removed file is still
reported with the diff of a full read, on both backends."""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import FilesState, apply_paths, files_vs_store
from jupcron.store.models import PlanFileMark
from tests.fixtures.plans import PlanFiles, swap_plan, write_plans


def _apply(factory: sessionmaker[Session], folder: Path, dry_run: bool = False,
           wallets: Collection[str] | None = None) -> None:  # fmt: skip
    apply_paths(factory, [folder], now=datetime.now(UTC), complete=True, folder=folder,
                dry_run=dry_run, wallets=wallets)  # fmt: skip


def _state(factory: sessionmaker[Session], folder: Path,
           wallets: Collection[str] | None = None) -> FilesState:  # fmt: skip
    with factory() as session:
        return files_vs_store(session, folder, wallets)


def _marks(factory: sessionmaker[Session]) -> int:
    with factory() as session:
        return session.execute(select(func.count()).select_from(PlanFileMark)).scalar_one()


def _aged(folder: Path) -> Path:
    """The folder, its files' mtimes a minute back (a file modified just before the
    apply read it is read by every status: `jupcron.plans.marks.RACY_NS`)."""
    for file in folder.iterdir():
        stat = file.stat()
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns - 60 * 10**9))
    return folder


def _same_stat(path: Path, text: str) -> None:
    """Write `text` (of the file's size) and put its mtime back: a stat that did not
    change."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_an_apply_records_its_files_and_status_trusts_an_unchanged_stat(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = _aged(plan_files({"a.yaml": [swap_plan("a")], "b.yaml": [swap_plan("b")]}))
    assert _state(plans_factory, folder).diff == ["+ a", "+ b"]
    _apply(plans_factory, folder)
    assert _marks(plans_factory) == 2
    assert _state(plans_factory, folder) == FilesState(str(folder), True)
    # a file whose bytes changed but whose size and mtime did not is not read: the
    # stat is what a status trusts (an editor or a copy changes the mtime)
    a = folder / "a.yaml"
    _same_stat(a, a.read_text().replace('"1h"', '"2h"'))
    assert _state(plans_factory, folder).in_sync


def test_a_file_written_just_before_the_apply_is_read_by_every_status(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    """Its stat proves nothing: a write of the same size in the same tick of the file
    system's clock would leave it as it was."""
    folder = plan_files({"a.yaml": [swap_plan("a")]})
    _apply(plans_factory, folder)
    a = folder / "a.yaml"
    assert _state(plans_factory, folder).in_sync
    _same_stat(a, a.read_text().replace('"1h"', '"2h"'))
    assert _state(plans_factory, folder).diff == ["~ a (version 2)"]


def test_a_touched_file_is_read_and_still_in_sync(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a")]})
    _apply(plans_factory, folder)
    a = folder / "a.yaml"
    stat = a.stat()
    os.utime(a, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert _state(plans_factory, folder) == FilesState(str(folder), True)


def test_a_changed_added_or_removed_file_is_reported(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a")], "b.yaml": [swap_plan("b")]})
    _apply(plans_factory, folder)
    a, b = folder / "a.yaml", folder / "b.yaml"

    write_plans(a, [swap_plan("a", every="2h")])  # changed
    assert _state(plans_factory, folder).diff == ["~ a (version 2)"]
    write_plans(a, [swap_plan("a")])  # back as it was (a new mtime, the same bytes)
    assert _state(plans_factory, folder).in_sync

    write_plans(folder / "c.yaml", [swap_plan("c")])  # added
    assert _state(plans_factory, folder).diff == ["+ c"]
    (folder / "c.yaml").unlink()
    assert _state(plans_factory, folder).in_sync

    b.unlink()  # removed
    state = _state(plans_factory, folder)
    assert (state.in_sync, state.diff) == (False, ["- b (disabled)"])
    _apply(plans_factory, folder)  # applied: in sync again, with one file recorded
    assert _marks(plans_factory) == 1
    assert _state(plans_factory, folder).in_sync

    write_plans(b, [swap_plan("b")])  # a file of a plan the store has disabled
    assert _state(plans_factory, folder).diff == ["~ b (version 3)"]


def test_a_changed_file_that_is_now_invalid_is_reported(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a")]})
    _apply(plans_factory, folder)
    write_plans(folder / "a.yaml", "plans: [ {name: broken")
    state = _state(plans_factory, folder)
    assert not state.in_sync
    assert state.problem is not None
    assert state.problem.startswith(f"{folder / 'a.yaml'}:")


def test_the_store_changed_by_another_apply_means_a_full_read(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, tmp_path: Path
) -> None:
    """A partial apply (a file outside the folder) that writes, another folder, other
    wallets: the records say nothing of them; the files are read and compared."""
    folder = plan_files({"a.yaml": [swap_plan("a")]})
    _apply(plans_factory, folder)
    other = write_plans(tmp_path / "other.yaml", [swap_plan("elsewhere")])
    apply_paths(plans_factory, [other], now=datetime.now(UTC))
    assert _state(plans_factory, folder).diff == ["- elsewhere (disabled)"]

    _apply(plans_factory, folder)
    assert _state(plans_factory, folder).in_sync
    # the same files under another name: nothing recorded of it
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "a.yaml").write_bytes((folder / "a.yaml").read_bytes())
    assert _state(plans_factory, twin).in_sync  # (read: it says the same)
    write_plans(twin / "a.yaml", [swap_plan("a", wallet="ops")])
    state = _state(plans_factory, twin, wallets=("default",))
    assert state.problem is not None
    assert "wallet" in state.problem
    # the wallets the apply was checked against are part of what was recorded
    write_plans(folder / "a.yaml", [swap_plan("a", wallet="ops")])
    _apply(plans_factory, folder, wallets=("default", "ops"))
    assert _state(plans_factory, folder, wallets=("default", "ops")).in_sync
    state = _state(plans_factory, folder, wallets=("default",))
    assert state.problem is not None
    assert "wallet" in state.problem


def test_a_dry_run_or_a_partial_apply_records_nothing(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    folder = plan_files({"a.yaml": [swap_plan("a")]})
    _apply(plans_factory, folder, dry_run=True)
    assert _marks(plans_factory) == 0
    apply_paths(plans_factory, [folder / "a.yaml"], now=datetime.now(UTC))
    assert _marks(plans_factory) == 0
    assert _state(plans_factory, folder).in_sync  # (read whole: nothing recorded)
    assert json.loads(json.dumps(_state(plans_factory, folder).as_json()))["in_sync"]


def test_files_read_by_worker_processes_are_recorded_too(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    files = {f"f{n}.yaml": [swap_plan(f"p{n}")] for n in range(5)}
    folder = _aged(plan_files(files))
    apply_paths(plans_factory, [folder], now=datetime.now(UTC), complete=True, folder=folder,
                workers=2)  # fmt: skip
    assert _marks(plans_factory) == 5
    with plans_factory() as session:
        recorded = {m.path: m.mtime_ns for m in session.scalars(select(PlanFileMark))}
    assert recorded == {str(f): f.stat().st_mtime_ns for f in folder.iterdir()}
    assert _state(plans_factory, folder).in_sync
