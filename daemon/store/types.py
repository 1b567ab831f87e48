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
    """The same instant in UTC; a naive datetime is refused (it has no instant).

    A datetime already in `UTC` (what the daemon makes) is given back as it is, as
    ``astimezone(UTC)`` would give it (a conversion to its own zone is the datetime
    itself), without the checks: a run binds about twenty of them."""
    zone = value.tzinfo
    if zone is UTC:
        return value
    if zone is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime {value!r}: jupcron stores only aware datetimes")
    return value.astimezone(UTC)


def _read_back(value: Any) -> datetime | None:
    """A datetime as the driver gives it back (SQLite's naive UTC, as text or parsed;
    PostgreSQL's aware one), aware in UTC."""
    if value is None:
        return None
    moment: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Stores aware datetimes as UTC; reads them back aware (UTC).

    SQLite keeps them as naive UTC text (one text per instant, so the unique
    (plan, fire time) key holds); PostgreSQL as ``timestamptz``.

    The bind and result processors are each one function where the implementation
    type's own step allows it (the run path binds about twenty datetimes a run and
    reads a dozen back; TypeDecorator's two steps cost twice as much): the same values
    as `process_bind_param` / `process_result_value` with the implementation's step.
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
        processor give, in one function. Where the implementation converts nothing
        (psycopg takes the aware datetime), `utc` alone. Anything else: the two steps."""
        impl = dialect.type_descriptor(self.impl_instance)
        if dialect.name == "sqlite":
            if getattr(impl, "_storage_format", None) != SQLITE_DATETIME:
                return super().bind_processor(dialect)

            def process(value: datetime | None) -> str | None:
                if value is None:
                    return None
                return utc(value).replace(tzinfo=None).isoformat(" ", "microseconds")

            return process
        if impl.bind_processor(dialect) is not None:
            return super().bind_processor(dialect)

        def process_aware(value: datetime | None) -> datetime | None:
            return None if value is None else utc(value)

        return process_aware

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        """The implementation's conversion (SQLite: the text parsed), then
        `process_result_value`'s, in one function."""
        convert = dialect.type_descriptor(self.impl_instance).result_processor(dialect, coltype)
        if convert is None:
            return _read_back

        def process(value: Any) -> datetime | None:
            return _read_back(convert(value))

        return process

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return _read_back(value)
