"""`make test` names its test folders (in the suites it runs side by side): together
they must be exactly pyproject's testpaths, or a folder would silently stop running
in CI."""

from __future__ import annotations

import shlex
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pytest_runs() -> list[list[str]]:
    """The pytest commands `make test` runs, as make expands them (`make -n`: printed,
    not run; the suites' own `$(MAKE)` is followed), collection-only passes left out."""
    printed = subprocess.run(
        ["make", "-n", "--no-print-directory", "test"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    runs = []
    for line in printed.splitlines():
        words = shlex.split(line, comments=True)
        if "pytest" in words and "--collect-only" not in words:
            runs.append(words[words.index("pytest") + 1 :])
    return runs


def test_make_test_runs_every_testpath_once() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    testpaths = config["tool"]["pytest"]["ini_options"]["testpaths"]
    named = [w for run in pytest_runs() for w in run if w.startswith("tests/")]
    assert sorted(named) == sorted(testpaths)
    assert len(named) == len(set(named))
