"""Review 17g: plan files that are no regular file, or too big, or whose YAML says
more than plain values (`plans validate` / `plans apply` as an operator runs them):
each is one clear ``file: message``, exit 1, nothing written; never a hang, never
the whole file in memory, never a value read as something else."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory
from tests.e2e.cli import jupcron
from tests.e2e.test_cli_plans import config_for
from tests.fixtures.plans import swap_plan, write_plans

HANG = 20  # seconds: far more than any of these takes once refused


def stored(db_url: str) -> dict[str, tuple[bool, bool]]:
    """Each stored plan's (enabled, dry_run)."""
    engine = make_engine(db_url)
    try:
        with session_factory(engine)() as session:
            return {p.name: (p.enabled, p.settings.dry_run) for p in store_plans.all_plans(session)}
    finally:
        engine.dispose()


def test_a_fifo_named_as_a_plan_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "plans.yaml"
    os.mkfifo(fifo)
    result = jupcron("plans", "validate", str(fifo), timeout=HANG)
    assert result.returncode == 1
    assert result.stderr.strip() == f"{fifo}: not a regular file (a FIFO, socket or device)"


def test_a_fifo_as_the_config_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "jupcron.yaml"
    os.mkfifo(fifo)
    result = jupcron("--config", str(fifo), "plans", "list", timeout=HANG)
    assert result.returncode != 0
    assert "not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_huge_plan_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A 4 GiB (sparse) file, under a 2 GiB address-space limit: refused by its size,
    not read whole first (which fails on memory, or fills it)."""
    huge = tmp_path / "plans.yaml"
    with huge.open("wb") as file:
        file.truncate(4 << 30)
    limit = 2 << 30

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    result = subprocess.run(
        [sys.executable, "-m", "jupcron", "plans", "validate", str(huge)],
        capture_output=True, text=True, timeout=60, preexec_fn=cap, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == f"{huge}: file is larger than 1048576 bytes"


def test_a_dangling_symlink_in_plans_dir_changes_nothing(tmp_path: Path, sqlite_url: str) -> None:
    """A plan file whose symlink target is gone (a mount not up yet) is a bad file, not
    an absent one: `plans apply` must not disable the plans it held."""
    folder = tmp_path / "plans"
    elsewhere = write_plans(tmp_path / "shared" / "b.yaml", [swap_plan("beta")])
    write_plans(folder / "a.yaml", [swap_plan("alpha")])
    (folder / "b.yaml").symlink_to(elsewhere)
    env = config_for(tmp_path, sqlite_url, folder)
    first = jupcron("plans", "apply", env=env)
    assert first.returncode == 0, first.stderr
    assert stored(sqlite_url) == {"alpha": (True, False), "beta": (True, False)}

    elsewhere.unlink()
    again = jupcron("plans", "apply", env=env)
    assert again.returncode == 1, again.stdout
    assert f"{folder / 'b.yaml'}: no such file" in again.stderr
    assert stored(sqlite_url) == {"alpha": (True, False), "beta": (True, False)}


def test_a_fifo_in_plans_dir_is_reported_not_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "plans"
    write_plans(folder / "a.yaml", [swap_plan("alpha")])
    os.mkfifo(folder / "b.yaml")
    (folder / "loop.yaml").symlink_to(folder / "loop.yaml")
    result = jupcron("plans", "validate", str(folder), timeout=HANG)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"{folder / 'b.yaml'}: not a regular file (a FIFO, socket or device)",
        f"{folder / 'loop.yaml'}: cannot read: Too many levels of symbolic links",
    ]


PLAN = """\
name: {name}
kind: swap
dry_run: {dry_run}
schedule: {{every: 1h}}
request:
  inputMint: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v
  outputMint: So11111111111111111111111111111111111111112
  amount: 1000000
"""


def test_dry_run_bool_tag_yes_is_stored_as_true(tmp_path: Path, sqlite_url: str) -> None:
    """`dry_run: !!bool yes` says true (ruamel, the reference reader, reads it so); the
    fast reader read any such form as false: a plan meant to sign nothing signed."""
    folder = tmp_path / "plans"
    folder.mkdir()
    for index, form in enumerate(("!!bool yes", "!!bool on", "!!bool True", "true")):
        text = PLAN.format(name=f"p{index}", dry_run=form)
        (folder / f"p{index}.yaml").write_text(text, encoding="utf-8")
    env = config_for(tmp_path, sqlite_url, folder)
    result = jupcron("plans", "apply", env=env)
    assert result.returncode == 0, result.stderr
    assert stored(sqlite_url) == {f"p{i}": (True, True) for i in range(4)}


def test_a_tagged_value_is_refused_and_nothing_written(tmp_path: Path, sqlite_url: str) -> None:
    folder = tmp_path / "plans"
    folder.mkdir()
    (folder / "a.yaml").write_text(PLAN.format(name="alpha", dry_run="true"), encoding="utf-8")
    bad = PLAN.format(name="!!python/object:os.system beta", dry_run="true")
    (folder / "b.yaml").write_text(bad, encoding="utf-8")
    env = config_for(tmp_path, sqlite_url, folder)
    result = jupcron("plans", "apply", env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"{folder / 'b.yaml'}:1:1: unsupported YAML tag !!python/object:os.system "
        "(write a plain string, number, boolean, list or mapping)"
    )
    assert stored(sqlite_url) == {}
