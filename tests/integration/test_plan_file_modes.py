"""Only jupcron's user or root may change a plan file: a plan says what is traded, how
much and to whom (a swap's receiver), and `plans apply`, SIGHUP and the optional path
unit apply whatever ``plans.dir`` holds. A plan file that group or others may write,
another user's, or one in a folder others may write (no sticky bit) was applied: any
local user could add a plan that pays them. Now it is a problem of the apply, with the
fix, and nothing is stored (a real SQLite store, real files; root runs the suite, so
another user is ``nobody``)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import PlanError
from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.fixtures.plans import swap_plan, write_plans
from tests.support.owners import NOBODY, own_private_group

T0 = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)


def stored(factory: sessionmaker[Session]) -> set[str]:
    with transaction(factory) as s:
        return {p.name for p in store_plans.enabled_plans(s)}


def folder_of_plans(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "plans"
    file = write_plans(folder / "pay.yaml", [swap_plan("pay")])
    folder.chmod(0o755)
    file.chmod(0o644)
    return folder, file


def refused(factory: sessionmaker[Session], folder: Path) -> str:
    with pytest.raises(PlanError) as raised:
        apply_paths(factory, [folder], now=T0)
    assert stored(factory) == set()  # nothing applied
    return str(raised.value)


@pytest.mark.parametrize("mode", [0o666, 0o602])
def test_a_plan_file_others_may_write_is_refused(
    sqlite_factory: sessionmaker[Session], tmp_path: Path, mode: int
) -> None:
    folder, file = folder_of_plans(tmp_path)
    file.chmod(mode)
    message = refused(sqlite_factory, folder)
    assert f"{file}:" in message
    assert f"permissions {mode:04o} are too open" in message
    assert f"chmod go-w {file}" in message


def test_a_plan_file_group_may_write_is_refused_unless_the_group_is_the_owners_own(
    sqlite_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    folder, file = folder_of_plans(tmp_path)
    os.chown(file, -1, NOBODY)  # a group other than its owner's own
    file.chmod(0o664)
    assert f"chmod go-w {file}" in refused(sqlite_factory, folder)
    os.chown(file, -1, own_private_group())  # a user private group (umask 0002): fine
    apply_paths(sqlite_factory, [folder], now=T0)
    assert stored(sqlite_factory) == {"pay"}


def test_a_plan_file_of_another_user_is_refused(
    sqlite_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    folder, file = folder_of_plans(tmp_path)
    os.chown(file, NOBODY, NOBODY)
    message = refused(sqlite_factory, folder)
    assert f"belongs to uid {NOBODY}" in message
    assert f"chown {os.geteuid()} {file}" in message


def test_a_plans_folder_others_may_write_is_refused_unless_sticky(
    sqlite_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    folder, _ = folder_of_plans(tmp_path)
    folder.chmod(0o777)  # anyone may put a plan of their own in it
    message = refused(sqlite_factory, folder)
    assert f"its folder {folder} has permissions 0777" in message
    assert f"chmod go-w {folder}" in message
    folder.chmod(0o1777)  # as /tmp: only a file's owner may replace it
    apply_paths(sqlite_factory, [folder], now=T0)
    assert stored(sqlite_factory) == {"pay"}


def test_plans_apply_says_so_in_one_line_and_stores_nothing(
    sqlite_url: str, tmp_path: Path
) -> None:
    folder, file = folder_of_plans(tmp_path)
    file.chmod(0o666)
    config = tmp_path / "jupcron.yaml"
    config.write_text(f"database:\n  url: {sqlite_url}\nplans:\n  dir: {folder}\n")
    done = subprocess.run(
        [sys.executable, "-m", "jupcron", "--config", str(config), "plans", "apply"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr
    assert f"{file}: permissions 0666 are too open" in done.stderr
    assert "applied:" not in done.stdout
    engine = make_engine(sqlite_url)
    try:
        assert stored(session_factory(engine)) == set()
    finally:
        engine.dispose()
