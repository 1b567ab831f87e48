"""pyproject.toml in the form current setuptools reads without deprecation warnings."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# setuptools 77 reads `project.license` as an SPDX string; older ones want the table form,
# whose use newer ones warn about in ~10 lines per build step
SPDX_LICENSE_SETUPTOOLS = (77, 0)


def test_the_license_is_an_spdx_string_not_a_table() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"
    classifiers = project.get("classifiers", [])
    assert not [c for c in classifiers if c.startswith("License ::")]  # not allowed beside it


def test_the_build_asks_for_a_setuptools_that_reads_that_form() -> None:
    requires = PYPROJECT["build-system"]["requires"]
    pins = [re.fullmatch(r"setuptools>=(\d+)(?:\.(\d+))?", r) for r in requires]
    found = [m for m in pins if m]
    assert len(found) == 1, requires
    floor = (int(found[0].group(1)), int(found[0].group(2) or 0))
    assert floor >= SPDX_LICENSE_SETUPTOOLS
    assert PYPROJECT["build-system"]["build-backend"] == "setuptools.build_meta"
