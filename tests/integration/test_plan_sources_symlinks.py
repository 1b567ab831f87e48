"""A plan whose file leaves ``plans.dir`` is disabled, also when the file (or the folder)
is a symlink: what the operator removed is the entry in the folder, not its target.

The daemon's SIGHUP (and `jupcron-plans.path`) applies ``plans.dir`` as
`apply_paths(factory, [folder], now=…, wallets=…)` (daemon/service/reload.py), not as
the complete set: a stored plan is disabled when its file was scanned or is gone. The
file was stored by its target (``resolve()``), which is still there after the link is
removed or ``plans.dir`` is pointed at another release: the plan stayed enabled, and
kept trading, with nothing in the diff. Real store (SQLite and PostgreSQL), real files.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.plans import swap_plan, write_plans

T0 = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)


def enabled(factory: sessionmaker[Session]) -> set[str]:
    with transaction(factory) as s:
        return {p.name for p in store_plans.enabled_plans(s)}


def reload_folder(factory: sessionmaker[Session], folder: Path, minutes: int) -> set[str]:
    """What a SIGHUP does with ``plans.dir`` (daemon/service/reload.py); the names disabled."""
    diff, _ = apply_paths(factory, [folder], now=T0 + timedelta(minutes=minutes))
    return set(diff.disabled)


def test_a_plan_whose_linked_file_is_removed_from_the_folder_is_disabled(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"  # where the operator keeps the plans (a git checkout, say)
    write_plans(repo / "dca.yaml", [swap_plan("dca")])
    write_plans(repo / "keep.yaml", [swap_plan("keep")])
    folder = tmp_path / "plans"
    folder.mkdir()
    (folder / "dca.yaml").symlink_to(repo / "dca.yaml")
    (folder / "keep.yaml").symlink_to(repo / "keep.yaml")
    reload_folder(plans_factory, folder, 0)
    assert enabled(plans_factory) == {"dca", "keep"}

    (folder / "dca.yaml").unlink()  # stop that plan: its link leaves plans.dir
    assert reload_folder(plans_factory, folder, 1) == {"dca"}
    assert enabled(plans_factory) == {"keep"}


def test_a_plan_left_out_of_the_release_plans_dir_now_points_to_is_disabled(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    one, two = tmp_path / "releases" / "1", tmp_path / "releases" / "2"
    write_plans(one / "a.yaml", [swap_plan("a")])
    write_plans(one / "b.yaml", [swap_plan("b")])
    write_plans(two / "a.yaml", [swap_plan("a")])  # release 2 drops plan b
    folder = tmp_path / "plans"  # plans.dir: a link to the release in effect
    folder.symlink_to(one)
    reload_folder(plans_factory, folder, 0)
    assert enabled(plans_factory) == {"a", "b"}

    switched = tmp_path / "plans.new"  # switched at once, as deploy tools do
    switched.symlink_to(two)
    switched.replace(folder)
    assert reload_folder(plans_factory, folder, 1) == {"b"}
    assert enabled(plans_factory) == {"a"}


def test_a_plan_renamed_in_a_file_applied_by_another_path_to_it_is_disabled(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    """The same file reached by two paths (a linked folder, and its target) is one file:
    a plan renamed in it is a removal of the old name whichever path is applied, or
    both names would fire."""
    real = tmp_path / "real"
    write_plans(real / "a.yaml", [swap_plan("old")])
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    apply_paths(plans_factory, [alias], now=T0)
    write_plans(real / "a.yaml", [swap_plan("new")])
    diff, _ = apply_paths(plans_factory, [real / "a.yaml"], now=T0 + timedelta(minutes=1))
    assert (diff.added, diff.disabled) == (("new",), ("old",))

    write_plans(real / "a.yaml", [swap_plan("newer")])
    diff, _ = apply_paths(plans_factory, [alias / "a.yaml"], now=T0 + timedelta(minutes=2))
    assert (diff.added, diff.disabled) == (("newer",), ("new",))
    assert enabled(plans_factory) == {"newer"}
