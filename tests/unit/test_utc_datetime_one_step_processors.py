"""`UTCDateTime`'s one-function processors give what TypeDecorator's two steps
(`process_bind_param` / `process_result_value` with the implementation type's own
processor) give, on SQLite and on PostgreSQL (psycopg), for every kind of datetime;
and a naive datetime is still refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, create_engine, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.types import TypeDecorator

from jupcron.store.types import UTCDateTime

MOMENTS = [
    datetime(2026, 11, 28, 9, 30, 0, 0, tzinfo=UTC),
    datetime(2026, 11, 28, 9, 30, 0, 640, tzinfo=UTC),
    datetime(1999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(2026, 3, 29, 1, 30, tzinfo=ZoneInfo("Europe/Berlin")),
    datetime(2026, 10, 25, 2, 30, fold=1, tzinfo=ZoneInfo("Europe/Berlin")),
    datetime(2026, 11, 28, 23, 0, 1, 5, tzinfo=timezone(timedelta(hours=-7, minutes=-30))),
    datetime(2026, 11, 28, 0, 0, tzinfo=timezone(timedelta(0))),  # UTC, another object
    datetime(2026, 11, 28, 0, 0, tzinfo=ZoneInfo("UTC")),
]
DIALECTS = [sqlite.dialect(), postgresql.psycopg.dialect()]


def _two_steps(dialect: Any) -> tuple[Any, Any]:
    """TypeDecorator's own bind and result processors (the reference)."""
    typ = UTCDateTime().dialect_impl(dialect)
    return (
        TypeDecorator.bind_processor(typ, dialect),
        TypeDecorator.result_processor(typ, dialect, None),
    )


def _fused(dialect: Any) -> tuple[Any, Any]:
    typ = UTCDateTime().dialect_impl(dialect)
    return typ.bind_processor(dialect), typ.result_processor(dialect, None)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_bind_is_the_two_steps(dialect: Any) -> None:
    bind, _ = _fused(dialect)
    reference, _ = _two_steps(dialect)
    assert bind(None) is None
    for moment in MOMENTS:
        got = bind(moment)
        want = moment if reference is None else reference(moment)
        assert got == want
        assert type(got) is type(want)
        if isinstance(got, datetime):
            assert got.tzinfo is UTC  # never another zone's object
            assert want.tzinfo is UTC


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_a_naive_datetime_is_refused(dialect: Any) -> None:
    bind, _ = _fused(dialect)
    with pytest.raises(ValueError, match="naive datetime"):
        bind(datetime(2026, 11, 28, 9, 30))


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_result_is_the_two_steps(dialect: Any) -> None:
    _, result = _fused(dialect)
    _, reference = _two_steps(dialect)
    bind, _ = _two_steps(dialect)
    stored = [None, "2026-11-28 09:30:00", "2026-11-28 09:30:00.000640"]
    stored += [bind(m) for m in MOMENTS]  # what each backend is handed
    if dialect.name != "sqlite":  # psycopg hands back aware datetimes of the session's zone
        stored += [m.astimezone(ZoneInfo("America/New_York")) for m in MOMENTS]
    for value in stored:
        got, want = result(value), reference(value)
        assert got == want
        if got is not None:
            assert got.tzinfo is UTC
            assert got.isoformat() == want.isoformat()


def test_sqlite_round_trip_keeps_the_instant(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'types.db'}")
    table = Table("t", MetaData(), Column("id", Integer, primary_key=True),
                  Column("at", UTCDateTime()))  # fmt: skip
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(table), [{"id": n, "at": m} for n, m in enumerate(MOMENTS)])
        conn.execute(insert(table), [{"id": 99, "at": None}])
    with engine.connect() as conn:
        rows = dict(conn.execute(select(table.c.id, table.c.at)).all())
        texts = [r[0] for r in conn.exec_driver_sql("SELECT at FROM t ORDER BY id").all()]
    engine.dispose()
    assert rows.pop(99) is None
    assert [rows[n] for n in range(len(MOMENTS))] == [m.astimezone(UTC) for m in MOMENTS]
    assert all(rows[n].tzinfo is UTC for n in range(len(MOMENTS)))
    # one text per instant (the unique (plan, fire time) key depends on it)
    assert texts[: len(MOMENTS)] == [
        m.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds") for m in MOMENTS
    ]
