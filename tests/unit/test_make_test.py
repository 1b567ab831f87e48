"""`make test` names its test folders (two xdist workers, then tests/system alone):
together they must be exactly pyproject's testpaths, or a folder would silently
stop running in CI."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def recipe(target: str) -> list[str]:
    """The command lines of a Makefile target."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"{target}:", line))
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        out.append(line.strip())
    return out


def test_make_test_runs_every_testpath_once() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    testpaths = config["tool"]["pytest"]["ini_options"]["testpaths"]
    named: list[str] = []
    for line in recipe("test"):
        words = shlex.split(line)
        if "pytest" in words:
            named += [w for w in words[words.index("pytest") + 1 :] if w.startswith("tests/")]
    assert sorted(named) == sorted(testpaths)
    assert len(named) == len(set(named))
