"""The daemon (daemon/service) and its status page (daemon/web) do not import each
other, in any form (TYPE_CHECKING blocks and function bodies too): what both use is
in daemon/listen (the listener, its messages, the metrics, the page's port), and
`jupcron run` (daemon/cli/run.py) hands the daemon its page."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jupcron.service
import jupcron.web

PACKAGES = {
    "jupcron.service": Path(jupcron.service.__file__).parent,
    "jupcron.web": Path(jupcron.web.__file__).parent,
}
APART = {"jupcron.service": "jupcron.web", "jupcron.web": "jupcron.service"}


def imports_of(source: str, package: str) -> set[str]:
    """Every module `source` (a module of `package`) imports, anywhere in it;
    ``from a import b`` counts as ``a`` and ``a.b``; a relative import is resolved."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def crossings(source: str, package: str) -> list[str]:
    """The imports of `source` (in `package`) that reach the package kept apart from it."""
    other = APART[package]
    names = imports_of(source, package)
    return sorted(name for name in names if name == other or name.startswith(other + "."))


FILES = [
    (package, path) for package, folder in PACKAGES.items() for path in sorted(folder.rglob("*.py"))
]


def test_both_packages_have_modules_to_check() -> None:
    names = {(package, path.name) for package, path in FILES}
    assert {("jupcron.service", "daemon.py"), ("jupcron.web", "serve.py")} <= names


@pytest.mark.parametrize(
    ("package", "path"), FILES, ids=lambda v: v if isinstance(v, str) else v.name
)
def test_service_and_web_do_not_import_each_other(package: str, path: Path) -> None:
    assert crossings(path.read_text(), package) == [], f"{package}: {path.name}"


@pytest.mark.parametrize(
    ("package", "source", "found"),
    [
        ("jupcron.web", "from jupcron.service.metrics import Metrics\n",
         ["jupcron.service.metrics", "jupcron.service.metrics.Metrics"]),
        ("jupcron.web", "import jupcron.service.reload\n", ["jupcron.service.reload"]),
        ("jupcron.web", "from jupcron import service\n", ["jupcron.service"]),
        ("jupcron.service", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
         "    from jupcron.web.serve import WebServer\n",
         ["jupcron.web.serve", "jupcron.web.serve.WebServer"]),
        ("jupcron.service", "def start():\n    from jupcron.web.activity import Activity\n",
         ["jupcron.web.activity", "jupcron.web.activity.Activity"]),
        ("jupcron.service", "from ..web import views\n", ["jupcron.web", "jupcron.web.views"]),
    ],
)  # fmt: skip
def test_the_check_finds_a_planted_import(package: str, source: str, found: list[str]) -> None:
    assert crossings(source, package) == found


def test_the_check_passes_what_both_may_import() -> None:
    source = "from jupcron.listen.metrics import Metrics\nfrom . import leader\n"
    assert crossings(source, "jupcron.service") == []
    assert crossings("from jupcron.webhooks import x\n", "jupcron.service") == []
