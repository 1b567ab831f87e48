"""Column types: timezone-aware UTC datetimes on every backend (the domain's words,
`RunStatus` and `PlanKind`, are in `jupcron.domain`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

# SQLite's text of a naive datetime (SQLAlchemy's default DATETIME storage format):
# what `datetime.isoformat(" ", "microseconds")` writes for a naive datetime
SQLITE_DATETIME = (
    "%(year)04d-%(month)02d-%(day)02d %(hour)02d:%(minute)02d:%(second)02d.%(microsecond)06d"
)


def utc(value: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is refused (it has no instant)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime {value!r}: jupcron stores only aware datetimes")
    return value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Stores aware datetimes as UTC; reads them back aware (UTC).

    SQLite keeps them as naive UTC text (one text per instant, so the unique
    (plan, fire time) key holds); PostgreSQL as ``timestamptz``.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        value = utc(value)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def bind_processor(self, dialect: Dialect) -> Any:
        """On SQLite, the same text as `process_bind_param` then SQLAlchemy's DATETIME
        processor give, in one function (a run binds a dozen datetimes; the two steps
        cost twice as much). Any other storage format: the two steps."""
        impl = dialect.type_descriptor(self.impl_instance)
        if dialect.name != "sqlite" or getattr(impl, "_storage_format", None) != SQLITE_DATETIME:
            return super().bind_processor(dialect)

        def process(value: datetime | None) -> str | None:
            naive = self.process_bind_param(value, dialect)
            return None if naive is None else naive.isoformat(" ", "microseconds")

        return process

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
