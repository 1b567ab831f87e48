"""`make demo` writes nothing outside the clone: its folder (a keypair, a database,
the daemons' logs, a chart) is a new one under `.venv/` (git-ignored, removed by
`make clean`) each time, not a `jupcron-demo-*` folder left in the machine's /tmp.

Read from what make would run (`make -n`), on a copy of the Makefile whose stamp
is up to date, so nothing is installed or run.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def demo_command(clone: Path) -> list[str]:
    done = subprocess.run(["make", "-n", "demo"], cwd=clone, capture_output=True, text=True,
                          timeout=30, check=True)  # fmt: skip
    (line,) = [x for x in done.stdout.splitlines() if "jupcron demo" in x]
    return shlex.split(line)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / ".installed").touch()  # newer than pyproject.toml: no install
    return tmp_path


def test_make_demo_keeps_its_folder_inside_the_clone(clone: Path) -> None:
    args = demo_command(clone)
    assert "--dir" in args, args
    folder = (clone / args[args.index("--dir") + 1]).resolve()
    assert folder.is_relative_to((clone / ".venv").resolve()), folder  # ignored, cleaned
    assert not folder.exists()  # jupcron demo makes it, new


def test_make_clean_removes_the_demo_folders(clone: Path) -> None:
    done = subprocess.run(["make", "-n", "clean"], cwd=clone, capture_output=True, text=True,
                          timeout=30, check=True)  # fmt: skip
    assert ".venv" in shlex.split(done.stdout.strip())
