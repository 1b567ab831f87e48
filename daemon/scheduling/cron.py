"""Five-field cron expressions, parsed into sets (pure, no clock).

Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
JAN-DEC), day of week (0-7 or SUN-SAT; 0 and 7 are Sunday). Each field is a
comma list of ``*``, ``*/n``, ``a``, ``a-b``, ``a-b/n`` or ``a/n``. Aliases:
``@hourly``, ``@daily`` (``@midnight``), ``@weekly``, ``@monthly``,
``@yearly`` (``@annually``).

As in Vixie cron, when both day fields are restricted (neither starts with
``*``) a day matches if *either* matches; otherwise both must.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import lru_cache

ALIASES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}

MONTHS = {
    name: i + 1
    for i, name in enumerate(
        ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    )
}
WEEKDAYS = {name: i for i, name in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"])}


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int]


FIELDS = (
    _Field("minute", 0, 59, {}),
    _Field("hour", 0, 23, {}),
    _Field("day of month", 1, 31, {}),
    _Field("month", 1, 12, MONTHS),
    _Field("day of week", 0, 7, WEEKDAYS),
)


@dataclass(frozen=True)
class CronExpr:
    """A parsed cron expression: the sets of values each field allows."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday .. 6 = Saturday
    dom_any: bool
    dow_any: bool

    @property
    def every_hour(self) -> bool:
        """True when the expression fires in every hour of the day."""
        return len(self.hours) == 24

    def matches_day(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.dom_any or self.dow_any:
            return dom and dow
        return dom or dow


def _value(text: str, field: _Field) -> int:
    upper = text.upper()
    if upper in field.names:
        return field.names[upper]
    if not text.isdigit():
        raise ValueError(f"{field.name}: '{text}' is not a number")
    number = int(text)
    if not field.low <= number <= field.high:
        raise ValueError(f"{field.name}: {number} is outside {field.low}-{field.high}")
    return number


@lru_cache(maxsize=1024)
def _parse_field(text: str, index: int) -> frozenset[int]:
    """One field's values; cached, so the sets for `*` and other common fields are
    one object shared by every plan (10,000 cron plans held 31 MB of them)."""
    field = FIELDS[index]
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise ValueError(f"{field.name}: empty item in '{text}'")
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ValueError(f"{field.name}: step '{step_text}' must be a positive number")
            step = int(step_text)
        if base == "*":
            low, high = field.low, field.high
        elif "-" in base:
            first, _, last = base.partition("-")
            low, high = _value(first, field), _value(last, field)
            if low > high:
                raise ValueError(f"{field.name}: range '{base}' goes backwards")
        else:
            low = _value(base, field)
            high = field.high if slash else low
        values.update(range(low, high + 1, step))
    return frozenset(values)


def parse_cron(text: str) -> CronExpr:
    """Parse a cron expression; raises ValueError with a one-line reason."""
    if not isinstance(text, str):
        raise ValueError("cron must be a string like '0 9 * * MON'")
    return _parse(text.strip())


@lru_cache(maxsize=4096)
def _parse(stripped: str) -> CronExpr:
    """A parsed expression is immutable: plans with the same cron share one."""
    expanded = ALIASES.get(stripped.lower(), stripped)
    if expanded.startswith("@"):
        raise ValueError(f"unknown cron alias '{stripped}' (known: {', '.join(ALIASES)})")
    parts = expanded.split()
    if len(parts) != 5:
        raise ValueError(
            f"cron needs 5 fields (minute hour day month weekday), got {len(parts)}: '{stripped}'"
        )
    sets = [_parse_field(part, index) for index, part in enumerate(parts)]
    weekdays = frozenset(d % 7 for d in sets[4])
    return CronExpr(
        text=stripped,
        minutes=sets[0],
        hours=sets[1],
        days=sets[2],
        months=sets[3],
        weekdays=weekdays,
        dom_any=parts[2].startswith("*"),
        dow_any=parts[4].startswith("*"),
    )
