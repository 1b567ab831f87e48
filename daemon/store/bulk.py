"""Many rows into one table, in the caller's transaction: PostgreSQL's ``COPY …
FROM STDIN`` (one stream, no statement per row), elsewhere one prepared INSERT run
by the driver's executemany. `plans apply` of 100,000 plans writes 200,000 rows this
way.

The rows carry what the ORM would have bound: JSON columns as the text of
``json.dumps`` (SQLAlchemy's default serializer, which our engines keep), other
columns through their type's bind processing (`UTCDateTime`'s check that a
datetime is aware, say), so a row reads back the same by any path. A value many
rows share (the apply's time, a schedule's first slot) is converted once. A JSON
value may come already encoded (`JsonText`: a plan version's content, made of its
row's parts), the text `json.dumps` would have made of it.

`update_rows` updates many rows by key, each to its own values, the same way: on
PostgreSQL one ``UPDATE … FROM unnest(…)`` of one array a column (psycopg's
executemany, even pipelined, spends ~0.3 ms of Python a row), elsewhere one prepared
UPDATE run by the driver's executemany.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from json.encoder import JSONEncoder, c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from operator import itemgetter
from typing import Any

from sqlalchemy import JSON, Table, bindparam, insert, update
from sqlalchemy.orm import Session

Convert = Callable[[Any], Any]
SHARED = 10_000  # distinct values of a column converted once (a cache per call)


class JsonText(str):
    """A JSON column's value as the text `json_text` (`json.dumps`) makes of it."""


# `json.dumps` with its defaults, less the encoder it sets up on every call (half the
# cost of a small mapping's); no circular check: rows hold plain values, made fresh
_ENCODER = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None, JSONEncoder().default, encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
)


def json_text(value: Any) -> str:
    """The text ``json.dumps(value)`` makes."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    if _ENCODER is not None and isinstance(value, dict | list):
        return "".join(_ENCODER(value, 0))
    return json.dumps(value)


def _driver(session: Session) -> tuple[Any, Any]:
    """The session's dialect and its connection's driver connection (sqlite3's,
    psycopg's), in the session's transaction."""
    connection = session.connection()
    driver = connection.connection.driver_connection
    assert driver is not None
    return connection.dialect, driver


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert `rows` (dicts with the same keys) into `table`."""
    if not rows:
        return
    dialect, driver = _driver(session)
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
        # (a column the rows lack has a default); the ORM encodes JSON itself
        session.execute(insert(table), [_decoded(row) for row in rows])
        return
    cursor = driver.cursor()
    try:
        cursor.executemany(str(statement), _values(table, dialect, order, rows))
    finally:
        cursor.close()


def update_rows(session: Session, table: Table, key: str,
                rows: Sequence[dict[str, Any]]) -> None:  # fmt: skip
    """Update the rows of `table` whose column `key` holds each of `rows`' value of
    `key`, each to that row's values of its other keys (dicts with the same keys)."""
    if not rows:
        return
    dialect, driver = _driver(session)
    names = [n for n in rows[0] if n != key]
    if not names:
        return  # nothing to set
    quote = dialect.identifier_preparer.quote
    target = dialect.identifier_preparer.format_table(table)
    if dialect.name == "postgresql":
        everyone = [key, *names]
        # binary arrays (``%b``): psycopg writes text arrays escaping each element (in
        # Python, a regular expression a quote: JSON is full of them)
        arrays = ", ".join(f"%b::{table.c[n].type.compile(dialect=dialect)}[]" for n in everyone)
        sets = ", ".join(f"{quote(n)} = v.{quote(n)}" for n in names)
        aliases = ", ".join(quote(n) for n in everyone)
        # (S608: names from the table's metadata, quoted by the dialect; values bound)
        sql = (f"UPDATE {target} SET {sets} FROM unnest({arrays}) AS v({aliases}) "  # noqa: S608
               f"WHERE {target}.{quote(key)} = v.{quote(key)}")  # fmt: skip
        columns = [list(c) for c in zip(*_values(table, dialect, everyone, rows), strict=True)]
        with driver.cursor() as cursor:
            cursor.execute(sql, columns)
        return
    if dialect.paramstyle != "qmark":  # (no driver of ours): the ORM's statement
        statement = update(table).where(table.c[key] == bindparam(f"{key}_"))
        session.execute(statement, [
            {**{n: v for n, v in _decoded(r).items() if n != key}, f"{key}_": r[key]}
            for r in rows
        ])  # fmt: skip
        return
    sets = ", ".join(f"{quote(n)} = ?" for n in names)
    sql = f"UPDATE {target} SET {sets} WHERE {quote(key)} = ?"  # noqa: S608 (as above)
    cursor = driver.cursor()
    try:
        cursor.executemany(sql, _values(table, dialect, [*names, key], rows))
    finally:
        cursor.close()


def _values(table: Table, dialect: Any, names: Sequence[str],
            rows: Sequence[dict[str, Any]]) -> Iterator[list[Any]]:  # fmt: skip
    """Each row's values of `names`, in that order, as bound (a column whose values
    are bound as they are is not gone over)."""
    converts = [(at, convert) for at, name in enumerate(names)
                if (convert := _convert(table, name, dialect)) is not _same]  # fmt: skip
    picked = itemgetter(*names)
    one = len(names) == 1  # (then `picked` gives the value, not a tuple of one)
    for row in rows:
        values = [picked(row)] if one else list(picked(row))
        for at, convert in converts:
            values[at] = convert(values[at])
        yield values


def _convert(table: Table, name: str, dialect: Any) -> Convert:
    column_type = table.c[name].type
    if isinstance(column_type, JSON):
        return _json
    process = column_type.dialect_impl(dialect).bind_processor(dialect)
    return _shared(process) if process is not None else _same


def _json(value: Any) -> Any:
    if value is None:
        return None
    if type(value) is JsonText:
        return str(value)
    return json_text(value)


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.loads(v) if type(v) is JsonText else v for k, v in row.items()}


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
