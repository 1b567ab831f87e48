"""Migrations are history: each carries the SQL text it ran and imports nothing
live from the package (a view or model changed later must not rewrite what an
old migration did). Only SQLAlchemy, Alembic and the standard library."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

VERSIONS = Path(__file__).resolve().parents[2] / "migrations" / "versions"
ALLOWED = {"sqlalchemy", "alembic", "__future__"}


def live_imports(source: str) -> list[str]:
    """Modules `source` imports that are neither the standard library nor ALLOWED."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." * node.level + (node.module or "")]
        else:
            continue
        found.extend(
            name
            for name in names
            if name.startswith(".")
            or name.split(".")[0] not in ALLOWED | set(sys.stdlib_module_names)
        )
    return found


MIGRATIONS = sorted(p for p in VERSIONS.glob("*.py") if p.name != "__init__.py")


def test_there_are_migrations_to_check() -> None:
    assert len(MIGRATIONS) >= 5


@pytest.mark.parametrize("path", MIGRATIONS, ids=lambda p: p.stem)
def test_a_migration_imports_nothing_live(path: Path) -> None:
    assert live_imports(path.read_text()) == []


def test_planted_live_imports_are_caught() -> None:
    assert live_imports("from jupcron.store.views import AUDIT_VIEW_SQL\n") == [
        "jupcron.store.views"
    ]
    assert live_imports("def upgrade():\n    import jupcron.store.models as m\n") == [
        "jupcron.store.models"
    ]
    assert live_imports("from . import helpers\n") == ["."]
    assert live_imports("import sqlalchemy as sa\nfrom alembic import op\nimport json\n") == []
