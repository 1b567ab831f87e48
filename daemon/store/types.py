"""Column types: timezone-aware UTC datetimes on every backend, and statuses."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class RunStatus(StrEnum):
    """The run state machine of DESIGN §2 (a contract)."""

    PENDING = "pending"
    REQUESTED = "requested"
    SIGNED = "signed"
    SUBMITTED = "submitted"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REJECTED = "rejected"
    SKIPPED = "skipped"
    DRY_RUN = "dry_run"
    IN_DOUBT = "in_doubt"

    @property
    def in_flight(self) -> bool:
        return self in IN_FLIGHT

    @property
    def final(self) -> bool:
        return self in FINAL


IN_FLIGHT = frozenset(
    {RunStatus.PENDING, RunStatus.REQUESTED, RunStatus.SIGNED, RunStatus.SUBMITTED}
)
FINAL = frozenset(
    {
        RunStatus.SUCCEEDED,
        RunStatus.FAILED,
        RunStatus.REJECTED,
        RunStatus.SKIPPED,
        RunStatus.DRY_RUN,
    }
)


class PlanKind(StrEnum):
    RECURRING = "recurring"
    RECURRING_CANCEL = "recurring-cancel"
    TRIGGER_CANCEL = "trigger-cancel"
    TRIGGER_CANCEL_BATCH = "trigger-cancel-batch"
    SWAP = "swap"
    TRIGGER_V2_DCA = "trigger-v2-dca"
    TRIGGER_V2_ORDER = "trigger-v2-order"
    TRIGGER_V2_CANCEL = "trigger-v2-cancel"

    @property
    def trigger_v2(self) -> bool:
        """A Trigger V2 kind: vault, JWT login, deposit or withdrawal (docs/products.md)."""
        return self in TRIGGER_V2


TRIGGER_V2 = frozenset(
    {PlanKind.TRIGGER_V2_DCA, PlanKind.TRIGGER_V2_ORDER, PlanKind.TRIGGER_V2_CANCEL}
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

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
