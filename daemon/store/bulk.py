"""Many rows into one table, in the caller's transaction: PostgreSQL's ``COPY …
FROM STDIN`` (one stream, no statement per row), elsewhere the driver's
executemany. `plans apply` of 100,000 plans writes 200,000 rows this way.

The COPY rows carry what the ORM would have bound: JSON columns as the text of
``json.dumps`` (SQLAlchemy's default serializer, which our engines keep), other
columns through their type's bind processing (`UTCDateTime`'s check that a
datetime is aware, say), so a row reads back the same by either path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import JSON, Table, insert
from sqlalchemy.orm import Session

Convert = Callable[[Any], Any]


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert `rows` (dicts with the same keys) into `table`."""
    if not rows:
        return
    connection = session.connection()
    if connection.dialect.name != "postgresql":
        session.execute(insert(table), rows)
        return
    names = list(rows[0])
    converts = [(name, _convert(table, name, connection.dialect)) for name in names]
    driver = connection.connection.driver_connection
    assert driver is not None
    columns = ", ".join(connection.dialect.identifier_preparer.quote(n) for n in names)
    target = connection.dialect.identifier_preparer.format_table(table)
    with driver.cursor() as cursor, cursor.copy(f"COPY {target} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([convert(row[name]) for name, convert in converts])


def _convert(table: Table, name: str, dialect: Any) -> Convert:
    column_type = table.c[name].type
    if isinstance(column_type, JSON):
        return lambda value: None if value is None else json.dumps(value)
    process = column_type.bind_processor(dialect)
    return process if process is not None else _same


def _same(value: Any) -> Any:
    return value
