"""Times in the API's answers (unix seconds or milliseconds, or ISO 8601 text) as
timezone-aware `datetime`s. A value no `datetime` can hold (a number out of range,
infinite or NaN; an offset that moves a time past year 1 or 9999) is a `ValueError`,
which pydantic makes a validation error of that one field: never an `OverflowError`
or `OSError` escaping the parser that reads a whole page."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

from jupcron.visible import clipped

_clip = partial(clipped, limit=40)


def from_unix(value: int | float, per_second: int = 1) -> datetime:
    """`value` seconds (``per_second=1000``: milliseconds) since the epoch, in UTC."""
    try:
        return datetime.fromtimestamp(value if per_second == 1 else value / per_second, UTC)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"time {_clip(value)} is out of range") from None


def from_iso(text: str) -> datetime:
    """An ISO 8601 time as the API sends it (``...Z``); naive means UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("not an ISO 8601 time") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"time {_clip(text)} is out of range") from None
    return moment
