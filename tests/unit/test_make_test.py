"""`make test` names its test folders (in the suites it runs side by side): together
they must be exactly pyproject's testpaths, or a folder would silently stop running
in CI."""

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
    targets = ["test"]
    while targets:
        for line in recipe(targets.pop()):
            words = shlex.split(line.lstrip("@"))
            if "pytest" in words:
                after = words[words.index("pytest") + 1 :]
                named += [w for w in after if w.startswith("tests/")]
            elif words[0] == "$(MAKE)":  # the suites `test` runs as targets of their own
                targets += [w for w in words[1:] if not w.startswith("-")]
    assert sorted(named) == sorted(testpaths)
    assert len(named) == len(set(named))
