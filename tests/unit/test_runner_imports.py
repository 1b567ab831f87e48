"""The runner's shape, read from its source: it reaches the database only through
the `RunStore` port (no SQLAlchemy, no ORM models, no engine), and its modules
import each other without a loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jupcron.runner

RUNNER = Path(jupcron.runner.__file__).parent
FORBIDDEN = ("sqlalchemy", "jupcron.store.models", "jupcron.store.engine")


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (TYPE_CHECKING blocks and
    function bodies too); ``from a import b`` counts as ``a`` and ``a.b``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against jupcron.runner
                base = "jupcron.runner" + (f".{base}" if base else "")
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


FILES = sorted(RUNNER.glob("*.py"))


def test_the_runner_has_modules_to_check() -> None:
    assert {"core.py", "flow.py", "submit.py", "recovery.py", "settle.py"} <= {
        f.name for f in FILES
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_runner_module_imports_the_database_layer(path: Path) -> None:
    bad = sorted(
        name
        for name in imports_of(path)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
    )
    assert bad == [], f"{path.name} imports {bad}"


def test_the_checker_sees_an_import_in_any_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from jupcron.store.models import Run\n"
        "def f():\n    import sqlalchemy.orm\n"
    )
    assert {"jupcron.store.models", "sqlalchemy.orm"} <= imports_of(sample)


def test_runner_modules_import_each_other_without_a_loop() -> None:
    names = {f.stem for f in FILES if f.stem != "__init__"}
    graph = {
        f.stem: {
            name.split(".")[2]
            for name in imports_of(f)
            if name.startswith("jupcron.runner.") and name.split(".")[2] in names
        }
        - {f.stem}
        for f in FILES
        if f.stem != "__init__"
    }
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, "import loop: " + " -> ".join((*path, node))
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, (*path, node))
        done.add(node)

    for node in sorted(graph):
        visit(node, ())
