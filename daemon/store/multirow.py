"""Multi-row INSERTs: many rows in one statement, as `Prepared` statements.

A run's events (and an answer's swap events) go in one INSERT … VALUES (…), (…)
rather than the driver's executemany, which psycopg runs as a pipeline of its own.
The statement for n rows is built once (cached by table, columns and n).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any, cast

from sqlalchemy import Insert, Table, bindparam

from jupcron.store.prepared import Prepared
from jupcron.store.steps import Send

ROWS = 32  # rows per multi-row INSERT (more go in several)
# psycopg parses a statement's placeholders once and keeps the result only for
# statements of at most 50 parameters; a longer one is parsed on every execution
# (140-440 us for 13-32 event rows, against ~50 us for one more statement)
PSYCOPG_PARAMS = 50


@cache
def _rows_stmt(
    base: Insert, columns: tuple[str, ...], rows: int
) -> tuple[Prepared, tuple[tuple[str, ...], ...]]:
    """`base` (INSERT INTO a table) with VALUES (…), … of `columns` for `rows` rows, and
    the names of each row's parameters (the column names suffixed ``_n``)."""
    names = tuple(tuple(f"{c}_{n}" for c in columns) for n in range(rows))
    table = cast(Table, base.table)
    values = [
        {c: bindparam(name, type_=table.c[c].type) for c, name in zip(columns, row, strict=True)}
        for row in names
    ]
    return Prepared(base.values(values)), names


def rows_per_insert(dialect: str, columns: int) -> int:
    """Rows in one multi-row INSERT: `ROWS`, and on PostgreSQL no more parameters
    than psycopg keeps parsed (`PSYCOPG_PARAMS`)."""
    if dialect == "postgresql":
        return max(1, min(ROWS, PSYCOPG_PARAMS // columns))
    return ROWS


def row_sends(
    dialect: str, base: Insert, columns: tuple[str, ...], rows: Sequence[Sequence[Any]]
) -> Iterator[Send]:
    """`rows` (values in `columns`' order) in multi-row INSERTs of at most
    `rows_per_insert` rows, none waited for."""
    step = rows_per_insert(dialect, len(columns))
    for start in range(0, len(rows), step):
        chunk = rows[start : start + step]
        stmt, names = _rows_stmt(base, columns, len(chunk))
        params: dict[str, Any] = {}
        for keys, row in zip(names, chunk, strict=True):
            params.update(zip(keys, row, strict=True))
        yield Send(stmt, params, wait=False)
