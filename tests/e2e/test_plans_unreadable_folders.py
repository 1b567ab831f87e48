"""Plan folders and files the service's user cannot read: `plans apply` (as `jupcronctl`
runs it, with the daemon's UID) is refused whole with the path and why, and nothing
is written; never plans disabled because a folder could not be listed, never a
traceback (the daemon's SIGHUP applies ``plans.dir`` the same way: a traceback there
ended the daemon).

The commands run as an unprivileged user (``setpriv`` to nobody when the tests run as
root), on a real SQLite file, the plans first applied as the operator who could read
them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.fixtures.plans import swap_plan, write_plans

NOBODY = 65534


@pytest.fixture
def shared(sqlite_template: Path) -> Iterator[Path]:
    """A folder the unprivileged user may use, with a migrated SQLite file in it."""
    root = Path(tempfile.mkdtemp(prefix="jupcron-unreadable-"))
    root.chmod(0o755)
    shutil.copy2(sqlite_template, root / "jupcron.db")
    try:
        yield root
    finally:
        for folder, dirs, _ in os.walk(root):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o700)  # (back to removable)
        shutil.rmtree(root)


def hand_over(root: Path) -> None:
    """`root` and all in it the service user's (when the tests run as root)."""
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root and no setpriv to drop to an unprivileged user")
        os.chown(root, NOBODY, NOBODY)
        for folder, dirs, files in os.walk(root):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(folder, name), NOBODY, NOBODY)


def tighten(folder: Path) -> None:
    """`folder` closed to the service's user (root's alone, as `sudo chmod 700` leaves it)."""
    if os.geteuid() == 0:
        os.chown(folder, 0, 0)
        folder.chmod(0o700)
    else:
        folder.chmod(0o000)


def as_service_user(
    root: Path, *args: str, module: bool = True, plans_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`jupcron ARGS` (or `python ARGS`) as the service's user (not root: root reads
    every folder); its config's plans.dir is `plans_dir`, else `root`/plans."""
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    config = root / "jupcron.yaml"  # (written before `hand_over`: readable by all)
    config.write_text(json.dumps({
        "database": {"url": f"sqlite:///{root / 'jupcron.db'}"},
        "plans": {"dir": str(plans_dir or root / "plans")},
    }), encoding="utf-8")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG", "JUPITER_API_KEY")}
    env["JUPCRON_CONFIG"] = str(config)
    return subprocess.run(
        [*prefix, sys.executable, *(["-m", "jupcron"] if module else []), *args], cwd=root, env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def applied_as_operator(root: Path, *paths: Path) -> None:
    engine = make_engine(f"sqlite:///{root / 'jupcron.db'}")
    try:
        apply_paths(session_factory(engine), list(paths), now=datetime.now(UTC))
    finally:
        engine.dispose()


def enabled(root: Path) -> set[str]:
    engine = make_engine(f"sqlite:///{root / 'jupcron.db'}")
    try:
        with transaction(session_factory(engine)) as session:
            return {p.name for p in store_plans.enabled_plans(session)}
    finally:
        engine.dispose()


def version_of(root: Path, name: str) -> int | None:
    engine = make_engine(f"sqlite:///{root / 'jupcron.db'}")
    try:
        with transaction(session_factory(engine)) as session:
            plan = store_plans.get_plan(session, name)
            return None if plan is None else plan.version
    finally:
        engine.dispose()


def test_a_subfolder_it_cannot_list_refuses_the_apply_and_disables_nothing(shared: Path) -> None:
    folder = shared / "plans"
    write_plans(folder / "a.yaml", [swap_plan("alpha")])
    write_plans(folder / "team" / "b.yaml", [swap_plan("beta")])
    applied_as_operator(shared, folder)
    assert enabled(shared) == {"alpha", "beta"}

    hand_over(shared)
    tighten(folder / "team")  # by root: the service's user cannot list it any more
    result = as_service_user(shared, "plans", "apply")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stdout
    assert f"{folder / 'team'}: cannot read this folder (Permission denied)" in result.stderr
    assert enabled(shared) == {"alpha", "beta"}  # beta was not removed: it was not seen


# the daemon's own SIGHUP (daemon/service/reload.py, `Reload.signal`) as the service's
# user, on the store and plans.dir of its config; its runtime carries only what a
# reload of the plans reads (the store, the wallets loaded at start)
RELOAD = """
import sys
from types import SimpleNamespace
from jupcron.config import load_config
from jupcron.service.notify import Notifier
from jupcron.service.reload import Reload
from jupcron.store.engine import make_engine, session_factory
config = load_config(sys.argv[1])
engine = make_engine(config.database.url)
reload = Reload(config, None, notifier=Notifier({}), status_text=lambda: "",
                plans_changed=lambda: None)
reload.runtime = SimpleNamespace(store=SimpleNamespace(factory=session_factory(engine)),
                                 wallets={"default": None})
print("reloaded" if reload.signal() else "not reloaded")
"""


def test_a_stored_plan_file_it_cannot_look_at_fails_the_reload_not_the_daemon(
    shared: Path,
) -> None:
    """SIGHUP applies plans.dir and asks whether the files of the other stored plans
    are still there: one it cannot tell of is no reason to keep or disable its plans,
    and no exception but a `JupcronError` may leave it (the daemon's loop lets any
    other end the daemon: `daemon_crashed`)."""
    folder = shared / "plans"
    write_plans(folder / "a.yaml", [swap_plan("alpha")])
    private = write_plans(shared / "private" / "c.yaml", [swap_plan("gamma")])
    applied_as_operator(shared, folder)
    applied_as_operator(shared, private)  # an explicit file, outside plans.dir
    assert enabled(shared) == {"alpha", "gamma"}

    write_plans(folder / "a.yaml", [swap_plan("alpha", every="2h")])  # an edit to apply
    hand_over(shared)
    tighten(shared / "private")
    result = as_service_user(
        shared, "-c", RELOAD, str(shared / "jupcron.yaml"), module=False
    )  # fmt: skip
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert result.returncode == 0, result.stdout
    assert result.stdout.rstrip().endswith("not reloaded"), result.stdout
    assert "reload_failed" in result.stdout, result.stdout
    assert f"{private}: cannot tell whether this plan file is still there" in result.stdout
    assert enabled(shared) == {"alpha", "gamma"}
    assert version_of(shared, "alpha") == 1  # the edit was not applied either
    command = as_service_user(shared, "plans", "apply", str(folder))  # the same by hand
    assert (command.returncode, "Traceback" in command.stderr) == (1, False), command.stderr
    assert f"{private}: cannot tell whether this plan file is still there" in command.stderr
    assert version_of(shared, "alpha") == 1


def test_a_plans_dir_it_can_no_longer_look_into_fails_the_reload_not_the_daemon(
    shared: Path,
) -> None:
    """plans.dir under a folder closed to the service's user since the start: its
    SIGHUP (and the plans path unit's reload) says `reload_failed` and keeps every plan;
    before, `Path.is_dir` raised `PermissionError` out of the daemon's loop."""
    folder = shared / "etc" / "plans"
    write_plans(folder / "a.yaml", [swap_plan("alpha")])
    applied_as_operator(shared, folder)
    hand_over(shared)
    tighten(shared / "etc")
    config = shared / "jupcron.yaml"
    result = as_service_user(shared, "-c", RELOAD, str(config), module=False, plans_dir=folder)
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("not reloaded"), result.stdout
    assert "Permission denied" in result.stdout, result.stdout
    assert enabled(shared) == {"alpha"}
