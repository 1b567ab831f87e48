"""The import package is `jupcron` (folder daemon/): the name `daemon` belongs to python-daemon.

Nothing of ours imports `daemon`, the installed distribution provides `jupcron` and
`jupcron.migrations` only, and `python -m jupcron` runs the CLI from anywhere.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def old_name_imports(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [name for name in names if name.split(".")[0] in ("daemon", "migrations")]
    return found


def test_the_check_sees_an_old_name() -> None:
    assert old_name_imports("import daemon.cli\nfrom migrations import env\n") == [
        "daemon.cli",
        "migrations",
    ]
    assert old_name_imports("from jupcron.cli import main\nfrom .daemon import x\n") == []


def test_nothing_imports_the_old_names() -> None:
    offenders = {
        str(path.relative_to(ROOT)): bad
        for folder in ("daemon", "migrations", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (bad := old_name_imports(path.read_text()))
    }
    assert offenders == {}


def test_installed_names_outside_the_checkout(tmp_path: Path) -> None:
    probe = (
        "import importlib.util, json, jupcron, jupcron.migrations\n"
        "print(json.dumps([importlib.util.find_spec(n) is not None"
        " for n in ('daemon', 'migrations')]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[false, false]", done.stderr
    version = subprocess.run(
        [sys.executable, "-m", "jupcron", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("jupcron, version ")
