"""One way to write a run, read from the source: the run tables are written by
`daemon/store/runwrite.py` alone, and that module is imported by the run store
port (`daemon/store/runstore.py`) alone. The follower's tables of a run's order
are written by `daemon/store/follow.py` alone. Everything else only reads.

A write is found by the AST: ``insert/update/delete(<table>)`` (SQLAlchemy's or a
dialect's), ``<table>.insert()/.update()/.delete()``, an ORM row built to be added
(``Run(...)``), or SQL text that inserts into, updates or deletes from the table.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

DAEMON = Path(__file__).resolve().parents[2] / "daemon"

RUN_TABLES = {
    "Run": "runs", "RunEvent": "run_events", "ExecuteResultRow": "execute_results",
    "SwapEventRow": "swap_events",
}  # fmt: skip
FOLLOW_TABLES = {
    "FollowedOrder": "followed_orders", "FollowEvent": "follow_events",
    "OrderTrade": "order_trades",
}  # fmt: skip
MODELS = {**RUN_TABLES, **FOLLOW_TABLES}
WRITERS = {
    **{table: "store/runwrite.py" for table in RUN_TABLES.values()},
    **{table: "store/follow.py" for table in FOLLOW_TABLES.values()},
}
LOW_LEVEL = "jupcron.store.runwrite"  # its functions write the run tables
PORT = "store/runstore.py"  # the one module that may call them
VERBS = {"insert", "update", "delete"}
SQL = re.compile(
    r"\b(?:insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+[\"'`]?("
    + "|".join(sorted(MODELS.values()))
    + r")\b",
    re.IGNORECASE,
)


def _table_names(tree: ast.AST) -> tuple[dict[str, str], set[str]]:
    """Names bound to a tracked table in a module: model classes imported (under any
    alias) and module aliases of `jupcron.store.models`; then names assigned from
    them (``RUNS = cast(Table, Run.__table__)``)."""
    names: dict[str, str] = {}
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "jupcron.store.models":
            for alias in node.names:
                if alias.name in MODELS:
                    names[alias.asname or alias.name] = MODELS[alias.name]
        elif isinstance(node, ast.ImportFrom) and node.module == "jupcron.store":
            modules.update(a.asname or a.name for a in node.names if a.name == "models")
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name.endswith(".models"))
    for _ in range(3):  # aliases of aliases
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, found = node.targets[0], _table_of(node.value, names, modules)
                if isinstance(target, ast.Name) and found is not None:
                    names[target.id] = found
    return names, modules


def _table_of(expr: ast.AST, names: dict[str, str], modules: set[str]) -> str | None:
    """The tracked table an expression stands for (a model, its ``__table__``, a
    name bound to one, ``cast(Table, …)`` of one), or None."""
    if isinstance(expr, ast.Name):
        return names.get(expr.id)
    if isinstance(expr, ast.Attribute):
        if expr.attr == "__table__":
            return _table_of(expr.value, names, modules)
        if expr.attr in MODELS and ast.unparse(expr.value) in modules:
            return MODELS[expr.attr]
    if isinstance(expr, ast.Call) and ast.unparse(expr.func) == "cast" and expr.args:
        return _table_of(expr.args[-1], names, modules)
    return None


def writes_of(source: str) -> list[tuple[int, str, str]]:
    """(line, table, how) for every write of a tracked table in `source`."""
    tree = ast.parse(source)
    names, modules = _table_names(tree)
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            verb = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if verb in VERBS and node.args:  # insert(RUNS), postgresql.insert(Run), …
                table = _table_of(node.args[0], names, modules)
                if table is not None:
                    found.append((node.lineno, table, f"{verb}()"))
            if isinstance(func, ast.Attribute) and func.attr in VERBS:  # RUNS.insert()
                table = _table_of(func.value, names, modules)
                if table is not None:
                    found.append((node.lineno, table, f".{func.attr}()"))
            table = _table_of(func, names, modules)  # Run(...): an ORM row to add
            if table is not None:
                found.append((node.lineno, table, "ORM row"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in SQL.finditer(node.value):
                found.append((node.lineno, match.group(1).lower(), "SQL text"))
    return found


def imports_low_level(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name == LOW_LEVEL for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom):
            if node.module == LOW_LEVEL:
                return True
            if node.module == "jupcron.store" and any(a.name == "runwrite" for a in node.names):
                return True
    return False


FILES = sorted(DAEMON.rglob("*.py"))


def where(path: Path) -> str:
    return str(path.relative_to(DAEMON))


def test_nothing_but_the_store_port_writes_the_run_tables() -> None:
    bad = [
        f"{where(path)}:{line}: {how} on {table} (only {WRITERS[table]} may)"
        for path in FILES
        for line, table, how in writes_of(path.read_text())
        if where(path) != WRITERS[table]
    ]
    assert bad == []


def test_only_the_run_store_calls_the_low_level_writes() -> None:
    importers = [where(p) for p in FILES if imports_low_level(p.read_text())]
    assert importers == [PORT]


def test_the_checker_sees_the_writes_that_are_there() -> None:
    """Not vacuous: the allowed writers' own writes are found, table by table."""
    runwrite = {t for _, t, _ in writes_of((DAEMON / "store/runwrite.py").read_text())}
    follow = {t for _, t, _ in writes_of((DAEMON / "store/follow.py").read_text())}
    assert runwrite == set(RUN_TABLES.values())
    assert follow == set(FOLLOW_TABLES.values())


PLANTED = {
    "core insert": (
        "from sqlalchemy import insert\nfrom jupcron.store.models import Run\n"
        "def f(s):\n    s.execute(insert(Run).values(status='pending'))\n",
        "runs",
    ),
    "dialect upsert on a table alias": (
        "from typing import cast\nfrom sqlalchemy import Table\n"
        "from sqlalchemy.dialects import postgresql\n"
        "from jupcron.store.models import RunEvent as E\nT = cast(Table, E.__table__)\n"
        "X = T\ndef f(c):\n    c.execute(postgresql.insert(X).on_conflict_do_nothing())\n",
        "run_events",
    ),
    "table method": (
        "from jupcron.store import models\nR = models.ExecuteResultRow.__table__\n"
        "def f(c):\n    c.execute(R.delete())\n",
        "execute_results",
    ),
    "orm add": (
        "from jupcron.store.models import Run\ndef f(s):\n    s.add(Run(status='skipped'))\n",
        "runs",
    ),
    "raw sql": (
        "from sqlalchemy import text\n"
        "def f(s):\n    s.execute(text('UPDATE runs SET status = :s WHERE id = :i'))\n",
        "runs",
    ),
    "orm update statement": (
        "import sqlalchemy as sa\nimport jupcron.store.models as m\n"
        "def f(s):\n    s.execute(sa.update(m.Run).where(m.Run.id == 1).values(status='x'))\n",
        "runs",
    ),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_planted_write_is_caught(name: str) -> None:
    source, table = PLANTED[name]
    assert table in {t for _, t, _ in writes_of(source)}


def test_a_planted_call_of_the_low_level_writes_is_caught() -> None:
    assert imports_low_level("from jupcron.store import runwrite\nrunwrite.claim(c, p, s)\n")
    assert imports_low_level("from jupcron.store.runwrite import advance\n")
    assert imports_low_level("import jupcron.store.runwrite\n")
    assert not imports_low_level("from jupcron.store import runs\nruns.get(c, 1)\n")


def test_reads_are_not_writes() -> None:
    source = (
        "from sqlalchemy import select, func\nfrom jupcron.store.models import Run\n"
        "RUNS = Run.__table__\n"
        "def f(s):\n    s.execute(select(RUNS).where(Run.status == 'update runsheet'))\n"
        "    return s.scalar(select(func.count()).select_from(Run))  # updated_at\n"
    )
    assert writes_of(source) == []
