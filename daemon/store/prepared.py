"""Core statements compiled once per dialect and run on the driver's cursor: the
run path's writes, without SQLAlchemy's per-execution machinery.

`Connection.execute` of a Core statement looks the statement's compiled form up
by its cache key (computed on every call), builds an execution context,
processes every parameter and wraps the cursor in a result; for the few
statements a run makes ten times, that was a fifth of a run's CPU. A `Prepared`
statement is compiled once per dialect by SQLAlchemy itself, so the SQL text, the
parameter style and each value's conversion (the bind and result processors of
the columns' types: UTC datetimes, JSON) are exactly those a Core execution uses;
only the per-call work goes.

Execution goes through `Connection._cursor_execute`, SQLAlchemy's own lean path
for statements it runs itself, whenever echo or a cursor event listener would see
it; with none, straight to the cursor, a failure handed to the same handler
`_cursor_execute` uses. Either way a driver error is raised as SQLAlchemy raises it
(an `OperationalError` for a store that is down or locked, the connection
invalidated after a disconnect), inside the connection's transaction as any other
statement. Each statement's parameters are taken and converted by what was worked
out when it was compiled (the names' order, which of them convert), its rows alike.

Each pooled connection keeps one cursor for these statements (in its pool
record's `info`, which SQLAlchemy clears when it reconnects): a new psycopg
cursor per statement looked its parameters' dumpers up afresh, 15-20 us of CPU a
statement. A statement that fails drops it (SQLAlchemy closes it), and the next
one opens another.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from operator import itemgetter
from types import ModuleType
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.dml import UpdateBase
from sqlalchemy.types import NullType

Processor = Callable[[Any], Any] | None
Build = Callable[[str], UpdateBase]
_CURSOR = "jupcron_prepared_cursor"  # key in a pooled connection's info: (driver conn, cursor)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]  # the bind names, in the order the driver takes them
    given: frozenset[str]  # the same names, to refuse a value meant for no parameter
    binds: tuple[Processor, ...]  # each one's conversion to what the driver takes
    positional: bool  # a tuple of values (SQLite's qmark), else a dict (psycopg)
    keys: tuple[str, ...]  # the returned columns
    results: tuple[Processor, ...]  # each one's conversion from what the driver gives
    direct: bytes | None = None  # PostgreSQL: the text with $n placeholders (`pgdirect`)
    order: tuple[int, ...] = ()  # the $n placeholders' values: their indices in `names`
    # worked out once from the above (the per-call work is then C calls and the
    # conversions themselves): the values in `names`' order, out of a mapping; the
    # (index, conversion) of those that have one; the same for the returned columns
    take: Callable[[Mapping[str, Any]], list[Any]] = field(init=False, repr=False)
    converts: tuple[tuple[int, Callable[[Any], Any]], ...] = field(init=False, repr=False)
    reads: tuple[tuple[str, Callable[[Any], Any]], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        assign = object.__setattr__  # frozen: set once, here
        assign(self, "take", _taker(self.names))
        assign(self, "converts", tuple((n, f) for n, f in enumerate(self.binds) if f is not None))
        assign(self, "reads", tuple((k, f) for k, f in zip(self.keys, self.results, strict=True)
                                    if f is not None))  # fmt: skip


def _taker(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], list[Any]]:
    """`params[name]` for each of `names`, in order, as a new list (a missing one raises
    `KeyError`, as the lookup of each would)."""
    if not names:
        return lambda params: []
    if len(names) == 1:
        (name,) = names
        return lambda params: [params[name]]
    getter = itemgetter(*names)
    return lambda params: list(getter(params))


def _compile(stmt: UpdateBase, dialect: Dialect) -> _Compiled:
    compiled = stmt.compile(dialect=dialect)
    binds = compiled.binds
    names = tuple(compiled.positiontup or ()) if compiled.positional else tuple(binds)
    untyped = [name for name in names if isinstance(binds[name].type, NullType)]
    if untyped:  # a value we would hand to the driver unconverted
        raise TypeError(f"prepared statement has untyped parameters: {untyped}")
    returned = list(stmt.exported_columns)  # RETURNING's (none without it)
    direct, order = _dollar(stmt, dialect, names)
    return _Compiled(
        sql=compiled.string,
        names=names,
        given=frozenset(names),
        binds=tuple(binds[n].type.dialect_impl(dialect).bind_processor(dialect) for n in names),
        positional=bool(compiled.positional),
        keys=tuple(str(column.key) for column in returned),
        results=tuple(
            column.type.dialect_impl(dialect).result_processor(dialect, None) for column in returned
        ),
        direct=direct,
        order=order,
    )


def _dollar(
    stmt: UpdateBase, dialect: Dialect, names: tuple[str, ...]
) -> tuple[bytes | None, tuple[int, ...]]:
    """On psycopg, the statement as libpq takes it (``$1::INTEGER``…: the same SQL in
    the numbered style) and the order of its values; elsewhere nothing."""
    if dialect.name != "postgresql" or dialect.driver != "psycopg":
        return None, ()
    numbered = stmt.compile(dialect=type(dialect)(paramstyle="numeric_dollar"))  # type: ignore[call-arg]
    positions = tuple(numbered.positiontup or ())
    if sorted(positions) != sorted(names):  # not the statement we compiled: keep the cursor
        return None, ()
    return numbered.string.encode(), tuple(names.index(name) for name in positions)


@dataclass(frozen=True)
class Direct:
    """A `Prepared` statement bound for libpq: its text with ``$n`` placeholders and
    their values in order; `rows` converts what it returns."""

    compiled: _Compiled
    sql: bytes
    values: list[Any]

    def rows(self, raw: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
        return Prepared._rows(self.compiled, raw)


class Prepared:
    """One statement (or one per dialect: `build` takes the dialect's name), compiled
    on first use on each dialect. Parameters are given by bind name; every bind of
    the statement must be given (no column defaults are filled in), and nothing
    else (a value with no parameter would be dropped without a word)."""

    def __init__(self, build: UpdateBase | Build) -> None:
        self._build = build
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def _for(self, dialect: Dialect) -> _Compiled:
        found = self._compiled.get(dialect.name)
        if found is None:
            with self._lock:
                build = self._build
                stmt = build(dialect.name) if callable(build) else build
                found = self._compiled[dialect.name] = _compile(stmt, dialect)
        return found

    def _bound(self, dialect: Dialect, params: Mapping[str, Any]) -> tuple[_Compiled, list[Any]]:
        """The statement compiled for `dialect`, and `params`' values converted, in
        the order the driver takes them."""
        compiled = self._for(dialect)
        if not compiled.given.issuperset(params):  # a column added to a row but not here
            unknown = sorted(set(params) - compiled.given)
            raise TypeError(f"prepared statement has no parameters named {unknown}")
        values = compiled.take(params)
        for index, bind in compiled.converts:
            values[index] = bind(values[index])
        return compiled, values

    def run(self, conn: Connection, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Execute with `params`; the rows it returns (RETURNING), converted."""
        compiled, values = self._bound(conn.dialect, params)
        pooled = conn.connection
        if compiled.direct is not None and pgdirect_module().usable(pooled.dbapi_connection):
            return self._rows(compiled, _run_direct(conn, compiled, values))
        return self._rows(compiled, _run_cursor(conn, compiled, values))

    def direct(self, dialect: Dialect, params: Mapping[str, Any]) -> Direct | None:
        """The statement as libpq takes it, with its values (`jupcron.store.pgdirect`);
        ``None`` where it has no such form (not psycopg)."""
        compiled, values = self._bound(dialect, params)
        if compiled.direct is None:
            return None
        return Direct(compiled, compiled.direct, [values[i] for i in compiled.order])

    @staticmethod
    def _rows(compiled: _Compiled, rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
        if not compiled.keys:
            return []
        keys, reads = compiled.keys, compiled.reads
        converted = []
        for row in rows:
            mapping = dict(zip(keys, row, strict=True))
            for key, read in reads:
                mapping[key] = read(mapping[key])
            converted.append(mapping)
        return converted


def _driver_params(compiled: _Compiled, values: list[Any]) -> Any:
    if compiled.positional:
        return tuple(values)
    return dict(zip(compiled.names, values, strict=True))


def _run_direct(
    conn: Connection, compiled: _Compiled, values: list[Any]
) -> Sequence[Sequence[Any]]:
    """Through libpq (`jupcron.store.pgdirect`); a failure raised as SQLAlchemy raises
    a cursor's (a lost connection invalidated)."""
    pooled = conn.connection
    assert compiled.direct is not None
    try:
        rows: Sequence[Sequence[Any]] = pgdirect_module().run(
            pooled.info, pooled.dbapi_connection, compiled.direct,
            [values[i] for i in compiled.order],
        )  # fmt: skip
        return rows
    except Exception as exc:  # raised as SQLAlchemy raises driver errors
        params = _driver_params(compiled, values)
        conn._handle_dbapi_exception(exc, compiled.sql, params, None, None)
        raise  # not reached: the handler raises


def _run_cursor(
    conn: Connection, compiled: _Compiled, values: list[Any]
) -> Sequence[Sequence[Any]]:
    """On the pooled connection's kept cursor, by SQLAlchemy's own path for the
    statements it runs itself (see the module's doc)."""
    params = _driver_params(compiled, values)
    pooled = conn.connection
    driver = pooled.dbapi_connection
    kept = pooled.info.get(_CURSOR)
    if kept is not None and kept[0] is driver:
        cursor = kept[1]
    else:
        cursor = pooled.cursor()
        pooled.info[_CURSOR] = (driver, cursor)
    try:
        if _watched(conn):
            conn._cursor_execute(cursor, compiled.sql, params)
        else:  # what `_cursor_execute` comes to with nothing to tell (6 us of its 8 go)
            try:
                cursor.execute(compiled.sql, params)
            except BaseException as exc:  # noqa: BLE001 - as `_cursor_execute`: its handler raises
                conn._handle_dbapi_exception(exc, compiled.sql, params, cursor, None)
        rows: Sequence[Sequence[Any]] = ()
        if compiled.keys:
            try:
                rows = cursor.fetchall()
            except Exception as exc:  # noqa: BLE001 - raised as SQLAlchemy raises driver errors
                conn._handle_dbapi_exception(exc, compiled.sql, params, cursor, None)
    except BaseException:
        pooled.info.pop(_CURSOR, None)  # closed by SQLAlchemy, or in an unknown state
        with contextlib.suppress(Exception):
            cursor.close()
        raise
    return rows


def _watched(conn: Connection) -> bool:
    """Whether anything looks at this connection's statements: echo, or a listener of
    SQLAlchemy's cursor events (the connection's own, its engine's, or the dialect's
    `do_execute`). Read at every statement: a listener added later is called from
    then on, as by `Connection._cursor_execute`."""
    engine = conn.engine
    return bool(
        conn._echo
        or conn._has_events
        or conn.dialect.dispatch.do_execute
        or engine.dispatch.before_cursor_execute
        or engine.dispatch.after_cursor_execute
    )


@cache
def pgdirect_module() -> ModuleType:
    """`jupcron.store.pgdirect`, imported once a statement is compiled for psycopg
    (a store on SQLite needs no PostgreSQL driver)."""
    return importlib.import_module("jupcron.store.pgdirect")
