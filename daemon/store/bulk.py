"""Many rows into one table, in the caller's transaction: PostgreSQL's ``COPY …
FROM STDIN`` (one stream, no statement per row), elsewhere one prepared INSERT run
by the driver's executemany. `plans apply` of 100,000 plans writes 200,000 rows this
way.

The rows carry what the ORM would have bound: JSON columns as the text of
``json.dumps`` (SQLAlchemy's default serializer, which our engines keep), other
columns through their type's bind processing (`UTCDateTime`'s check that a
datetime is aware, say), so a row reads back the same by any path. A value many
rows share (the apply's time, a schedule's first slot) is converted once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sqlalchemy import JSON, Table, insert
from sqlalchemy.orm import Session

Convert = Callable[[Any], Any]
SHARED = 10_000  # distinct values of a column converted once (a cache per call)


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert `rows` (dicts with the same keys) into `table`."""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    driver = connection.connection.driver_connection
    assert driver is not None
    names = list(rows[0])
    if dialect.name == "postgresql":
        quote = dialect.identifier_preparer.quote
        columns = ", ".join(quote(n) for n in names)
        target = dialect.identifier_preparer.format_table(table)
        with (
            driver.cursor() as cursor,
            cursor.copy(f"COPY {target} ({columns}) FROM STDIN") as copy,
        ):
            for row in _values(table, dialect, names, rows):
                copy.write_row(row)
        return
    statement = insert(table).compile(dialect=dialect, column_keys=names)
    order = list(statement.positiontup or ())  # the table's column order
    if dialect.paramstyle != "qmark" or sorted(order) != sorted(names):
        session.execute(insert(table), rows)  # (a column the rows lack has a default)
        return
    cursor = driver.cursor()
    try:
        cursor.executemany(str(statement), _values(table, dialect, order, rows))
    finally:
        cursor.close()


def _values(table: Table, dialect: Any, names: Sequence[str],
            rows: Sequence[dict[str, Any]]) -> Iterator[list[Any]]:  # fmt: skip
    """Each row's values of `names`, in that order, as bound."""
    converts = [(name, _convert(table, name, dialect)) for name in names]
    for row in rows:
        yield [convert(row[name]) for name, convert in converts]


def _convert(table: Table, name: str, dialect: Any) -> Convert:
    column_type = table.c[name].type
    if isinstance(column_type, JSON):
        return _json
    process = column_type.dialect_impl(dialect).bind_processor(dialect)
    return _shared(process) if process is not None else _same


def _json(value: Any) -> Any:
    return None if value is None else json.dumps(value)


def _shared(process: Convert) -> Convert:
    """`process`, run once per distinct (hashable) value."""
    known: dict[Any, Any] = {}

    def convert(value: Any) -> Any:
        try:
            return known[value]
        except KeyError:
            pass
        except TypeError:  # not hashable
            return process(value)
        out = process(value)
        if len(known) < SHARED:
            known[value] = out
        return out

    return convert


def _same(value: Any) -> Any:
    return value
