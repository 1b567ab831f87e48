"""UTCDateTime's one-step SQLite bind writes the text the two steps wrote
(`process_bind_param`, then SQLAlchemy's DATETIME processor): the unique
(plan, fire time) key compares these texts, so an old row and a new one for the
same instant must be the same text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.types import TypeDecorator

from jupcron.store.models import Run
from jupcron.store.types import UTCDateTime

MOMENTS = [
    datetime(2026, 11, 27, 4, 57, 51, 166419, tzinfo=UTC),
    datetime(2026, 1, 1, tzinfo=UTC),  # no microseconds: still six digits
    datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC),  # a three-digit year, zero-padded
    datetime(2030, 1, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5))),  # to UTC first
    datetime(2030, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),
]


@pytest.mark.parametrize("moment", [*MOMENTS, None])
def test_one_step_text_is_the_two_steps_text(moment: datetime | None) -> None:
    dialect = sqlite.dialect()
    column_type = Run.__table__.c.scheduled_for.type
    assert isinstance(column_type, UTCDateTime)
    impl = column_type.dialect_impl(dialect)
    one_step = impl.bind_processor(dialect)
    two_steps = TypeDecorator.bind_processor(impl, dialect)
    assert one_step is not None
    assert two_steps is not None
    assert one_step is not two_steps
    assert one_step(moment) == two_steps(moment)


def test_a_naive_datetime_is_still_refused() -> None:
    dialect = sqlite.dialect()
    process = Run.__table__.c.scheduled_for.type.dialect_impl(dialect).bind_processor(dialect)
    with pytest.raises(ValueError, match="naive"):
        process(datetime(2026, 1, 1))


def test_postgresql_keeps_the_two_steps() -> None:
    dialect = postgresql.psycopg.dialect()  # type: ignore[attr-defined]
    impl = Run.__table__.c.scheduled_for.type.dialect_impl(dialect)
    process = impl.bind_processor(dialect)
    assert process is not None
    assert process(MOMENTS[4]) == datetime(2030, 1, 2, 4, 30, tzinfo=UTC)
