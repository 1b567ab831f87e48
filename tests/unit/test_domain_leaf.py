"""The domain's words live in a leaf: `daemon/domain.py` imports nothing from the
project (standard library only), every module takes the words from it (not by way
of the store), and reading and checking plans does not import the store at all."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

DAEMON = Path(__file__).resolve().parents[2] / "daemon"
LEAF = "jupcron.domain"
WORDS = {"RunStatus", "PlanKind", "IN_FLIGHT", "FINAL", "TRIGGER_V2"}
# the plans' own modules that write them into the store (the rest only read files)
PLANS_TO_STORE = {"apply.py"}


def imports(source: str) -> list[tuple[str, set[str]]]:
    """(module, names) of every import anywhere in `source` (``import a`` has no names)."""
    found: list[tuple[str, set[str]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, set()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.append((base, {alias.name for alias in node.names}))
    return found


def leaf_problems(source: str) -> list[str]:
    """What makes `source` no leaf: a project or third-party import, or a relative one."""
    return [
        module
        for module, _ in imports(source)
        if module.startswith(".")
        or module.split(".")[0] not in sys.stdlib_module_names | {"__future__"}
    ]


def word_problems(source: str) -> list[str]:
    """Domain words imported from anywhere but the leaf (a re-export, say)."""
    return [
        f"{sorted(names & WORDS)} from {module}"
        for module, names in imports(source)
        if names & WORDS and module != LEAF
    ]


FILES = sorted(DAEMON.rglob("*.py"))


def test_the_domain_module_is_a_leaf() -> None:
    assert leaf_problems((DAEMON / "domain.py").read_text()) == []


def test_the_words_are_defined_once_in_the_leaf() -> None:
    defined = {
        str(path.relative_to(DAEMON))
        for path in FILES
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef | ast.Assign)
        and (
            getattr(node, "name", None) in WORDS
            or any(isinstance(t, ast.Name) and t.id in WORDS for t in getattr(node, "targets", []))
        )
    }
    assert defined == {"domain.py"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DAEMON)))
def test_every_module_takes_the_words_from_the_leaf(path: Path) -> None:
    assert word_problems(path.read_text()) == []


def test_reading_plans_does_not_import_the_store() -> None:
    bad = {
        path.name: module
        for path in sorted((DAEMON / "plans").glob("*.py"))
        if path.name not in PLANS_TO_STORE
        for module, _ in imports(path.read_text())
        if module == "jupcron.store" or module.startswith("jupcron.store.")
    }
    assert bad == {}


def test_the_store_speaks_the_leaf() -> None:
    """The store takes its words from the leaf; of the plans it knows only the request
    models (`plans.schema`, which imports nothing of the store): no loop either way."""
    store = "\n".join(p.read_text() for p in sorted((DAEMON / "store").glob("*.py")))
    modules = {module for module, _ in imports(store)}
    assert LEAF in modules
    assert {m for m in modules if m.split(".")[:2] == ["daemon", "plans"]} <= {
        "jupcron.plans.schema"
    }


def test_planted_violations_are_caught() -> None:
    assert leaf_problems("from jupcron.errors import JupcronError\n") == ["jupcron.errors"]
    assert leaf_problems("def f():\n    import sqlalchemy\n") == ["sqlalchemy"]
    assert leaf_problems("from . import x\n") == ["."]
    assert leaf_problems("from __future__ import annotations\nfrom enum import StrEnum\n") == []
    assert word_problems("from jupcron.store.types import RunStatus\n") == [
        "['RunStatus'] from jupcron.store.types"
    ]
    assert word_problems("from jupcron.domain import PlanKind, RunStatus\n") == []


def test_loading_and_checking_plans_loads_no_store_module() -> None:
    """The same, at run time: what importing the plan reader pulls in (a fresh interpreter)."""
    code = (
        "import sys, jupcron.domain, jupcron.plans.schema, jupcron.plans.load\n"
        "print(sorted(m for m in sys.modules if m.startswith('jupcron.store')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
