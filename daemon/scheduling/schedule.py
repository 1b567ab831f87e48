"""Fire-time maths for plan schedules: pure functions, time is a parameter.

A schedule is exactly one of ``cron`` (wall-clock, in ``timezone``), ``every``
(elapsed time) or ``at`` (one instant), optionally limited to a
``start``/``end`` window. Every instant returned is timezone-aware UTC.

Daylight saving time (documented behaviour, tested in tests/unit/test_schedule*):

* ``cron`` follows the wall clock of ``timezone``. A wall-clock time that does
  not exist (the hour skipped in spring) fires once, shifted forward by the
  gap (02:30 becomes 03:30 in Europe/Berlin), so no day is skipped; if that
  lands on another fire time they merge. A wall-clock time that happens twice
  (the repeated hour in autumn) fires once, at its first occurrence, so no day
  is doubled -- unless the hour field is ``*`` (the job runs every hour), in
  which case it fires at both, keeping one fire per hour of real time.
* ``every`` is elapsed time: slots are ``anchor + k * every`` where the anchor
  is ``start`` if given, else 1970-01-01T00:00Z. DST never shifts it (so
  ``every: 1d`` keeps the same UTC time of day); use ``cron`` for wall-clock.
* ``at`` fires once, if it lies inside the window.

Misfires (the daemon was down or too busy at a fire time) are settled by
`jupcron.scheduling.catchup`: ``misfire: skip`` records every missed slot as
skipped; ``misfire: run-once`` coalesces them into one run of the latest missed
slot if it is at most ``grace`` seconds late (the others are recorded as skipped).
While the daemon runs, a fire that starts more than ``grace`` seconds late is
treated as missed. ``jitter`` delays a fire by a stable pseudo-random amount
(0..jitter seconds) without changing its slot (``scheduled_for``); lateness is
counted from the slot plus that delay, everywhere (`is_late`).
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from functools import lru_cache
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jupcron.scheduling.cron import CronExpr, parse_cron

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
DEFAULT_GRACE = 300
# how far to look for the next cron match: past the longest gap between two fires of
# any five-field cron, Feb 29 on a given weekday (``0 0 29 2 */7``: the day fields are
# AND-ed), 40 years across a century year (2088 -> 2128); a shorter look took a sparse
# cron's next fire for none, and its plan for finished after one fire
HORIZON_DAYS = 366 * 41
# above every UTC offset a zone has had since 1970 (+14:00, Pacific/Kiritimati)
MAX_UTC_OFFSET = timedelta(hours=15)
MIN_YEAR, MAX_YEAR = 1970, 2200

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+)([smhdw])")


class Misfire(StrEnum):
    SKIP = "skip"
    RUN_ONCE = "run-once"


def parse_duration(value: object, *, what: str = "duration") -> int:
    """``90s``, ``15m``, ``6h``, ``1d``, ``1w``, ``1h30m`` or whole seconds -> seconds."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be like 90s, 15m, 6h or 1d")
    if isinstance(value, int):
        seconds = value
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        if text.startswith("-"):
            raise ValueError(f"{what} must not be negative")
        if text.isdigit():
            seconds = int(text)
        else:
            if not text or _DURATION.sub("", text) != "":
                raise ValueError(f"{what} '{value}' must be like 90s, 15m, 6h or 1d")
            seconds = sum(int(n) * _UNITS[u] for n, u in _DURATION.findall(text))
    else:
        raise ValueError(f"{what} must be like 90s, 15m, 6h or 1d")
    if seconds < 0:  # (a jitter of -5 was stored, and read as none)
        raise ValueError(f"{what} must not be negative")
    if seconds > 10 * 366 * 86400:
        raise ValueError(f"{what} is longer than 10 years")
    return seconds


def parse_instant(value: object, *, what: str = "time") -> datetime:
    """ISO 8601 with an offset (``2026-12-01T00:00:00Z``) -> aware UTC datetime."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(
                f"{what} '{value}' is not an ISO 8601 time like 2026-12-01T09:00:00Z"
            ) from None
    else:
        raise ValueError(f"{what} must be an ISO 8601 time like 2026-12-01T09:00:00Z")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ValueError(f"{what} '{value}' needs an offset, like Z or +01:00")
    if not MIN_YEAR <= parsed.year <= MAX_YEAR:
        raise ValueError(f"{what} '{value}' must be between {MIN_YEAR} and {MAX_YEAR}")
    return parsed.astimezone(UTC)


def parse_timezone(value: object) -> ZoneInfo:
    if not isinstance(value, str) or not value:
        raise ValueError("timezone must be an IANA name like Europe/Berlin")
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown timezone '{value}' (use an IANA name like Europe/Berlin)"
        ) from None


# the tz database's fixed-offset abbreviations: "EST" is UTC-05:00 all year, not New York
_ABBREVIATIONS = frozenset({"EST", "MST", "HST"})
# the tz database's Etc/GMT+5 is UTC-05:00: POSIX's sign, the reverse of ISO 8601's
_REVERSED = re.compile(r"Etc/GMT[+-]\d+")


@lru_cache(maxsize=1)
def _place_names() -> frozenset[str]:
    """The zone names of the tz database (the list of the tzdata package, a dependency):
    one list for every machine, unlike what a system's folder also holds (``localtime``,
    ``posixrules``, ``posix/…``, ``right/…``; `ZoneInfo` reads none of them in a jupcron
    process, which reads zone rules from the package only: `jupcron.scheduling.zones`)."""
    with resources.files("tzdata").joinpath("zones").open(encoding="utf-8") as lines:
        return frozenset(name for line in lines if (name := line.strip()))


def plan_timezone(value: object) -> ZoneInfo:
    """A plan's ``timezone`` as `plans validate`/`apply` accept it: a name of the tz
    database, which every machine reads as the same zone. `ZoneInfo` also takes files
    of the machine it runs on (``localtime`` is its /etc/localtime): `plans apply`
    stores a plan's first slot as the applying machine reads the name, the daemon (or
    its standby) works out the next ones as it reads it, and a slot is an instant, so
    a daily plan applied from a Berlin host and run by a UTC daemon fired twice a day.
    A stored plan is still read by `parse_timezone` (never left unread)."""
    zone = parse_timezone(value)
    offset = datetime(2026, 7, 1, tzinfo=zone).isoformat()[-6:]
    if value in _ABBREVIATIONS:
        raise ValueError(
            f"timezone '{value}' is UTC{offset} all year (an abbreviation, no daylight "
            "saving): name a place like America/New_York, or UTC"
        )
    if _REVERSED.fullmatch(zone.key) and offset != "+00:00":
        raise ValueError(
            f"timezone '{value}' is UTC{offset} all year: an Etc/GMT name's sign is the "
            "reverse of what it reads (POSIX), so it says the opposite of the offset it "
            "seems to: name a place like Asia/Karachi, or UTC"
        )
    if value not in _place_names():
        raise ValueError(
            f"timezone '{value}' is not in the tz database's list of zones (a name like "
            "localtime or posix/… is a file of this machine, which another machine reads "
            "otherwise): use an IANA name like Europe/Berlin"
        )
    return zone


@dataclass(frozen=True)
class Schedule:
    """When a plan fires. Build with `parse_schedule`."""

    cron: CronExpr | None = None
    every: int | None = None  # seconds
    at: datetime | None = None
    timezone: str = "UTC"
    start: datetime | None = None
    end: datetime | None = None
    jitter: int = 0
    misfire: Misfire = Misfire.RUN_ONCE
    grace: int = DEFAULT_GRACE
    tz: ZoneInfo = field(default=ZoneInfo("UTC"), compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The normalised form stored in the database; `parse_schedule` reads it back."""
        out: dict[str, Any] = {}
        if self.cron is not None:
            out["cron"] = self.cron.text
        if self.every is not None:
            out["every"] = self.every
        if self.at is not None:
            out["at"] = self.at.isoformat()
        out["timezone"] = self.timezone
        if self.start is not None:
            out["start"] = self.start.isoformat()
        if self.end is not None:
            out["end"] = self.end.isoformat()
        out["jitter"] = self.jitter
        out["misfire"] = str(self.misfire)
        out["grace"] = self.grace
        return out

    def describe(self) -> str:
        if self.cron is not None:
            text = f"cron '{self.cron.text}'"
        elif self.every is not None:
            text = f"every {format_duration(self.every)}"
        else:
            assert self.at is not None
            text = f"at {self.at.isoformat()}"
        if self.timezone != "UTC":
            text += f" {self.timezone}"
        return text


def format_duration(seconds: int) -> str:
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


SCHEDULE_KEYS = ("cron", "every", "at", "timezone", "start", "end", "jitter", "misfire", "grace")


def parse_schedule(data: Mapping[str, Any]) -> Schedule:
    """A schedule from its YAML/stored mapping; raises ValueError with one reason.

    A Schedule is immutable, so plans with the same schedule share one (the
    daemon parses every plan's at start; a cron's "does it ever fire" probe is
    not cheap)."""
    try:
        key = tuple(sorted(data.items()))
        hash(key)
    except TypeError:  # an unhashable value (a list, say): a mistake _parse explains
        return _parse(data)
    return _parse_shared(key)


@lru_cache(maxsize=4096)
def _parse_shared(key: tuple[tuple[str, Any], ...]) -> Schedule:
    return _parse(dict(key))


def _parse(data: Mapping[str, Any]) -> Schedule:
    unknown = [k for k in data if k not in SCHEDULE_KEYS]
    if unknown:
        raise ValueError(f"unknown schedule key '{unknown[0]}'")
    chosen = [k for k in ("cron", "every", "at") if data.get(k) is not None]
    if len(chosen) != 1:
        found = ", ".join(chosen) if chosen else "none"
        raise ValueError(f"give exactly one of cron, every, at (found: {found})")
    timezone = data.get("timezone") or "UTC"
    tz = parse_timezone(timezone)
    cron = parse_cron(data["cron"]) if data.get("cron") is not None else None
    every = None
    if data.get("every") is not None:
        every = parse_duration(data["every"], what="every")
        if every <= 0:
            raise ValueError("every must be greater than 0")
    at = parse_instant(data["at"], what="at") if data.get("at") is not None else None
    start = parse_instant(data["start"], what="start") if data.get("start") is not None else None
    end = parse_instant(data["end"], what="end") if data.get("end") is not None else None
    if start is not None and end is not None and end <= start:
        raise ValueError("end must be after start")
    jitter = parse_duration(data.get("jitter") or 0, what="jitter")
    grace_raw = data.get("grace")
    grace = DEFAULT_GRACE if grace_raw is None else parse_duration(grace_raw, what="grace")
    if jitter > grace:
        raise ValueError(f"jitter ({jitter}s) must not exceed grace ({grace}s)")
    try:
        misfire = Misfire(data.get("misfire") or Misfire.RUN_ONCE)
    except ValueError:
        raise ValueError("misfire must be 'skip' or 'run-once'") from None
    schedule = Schedule(cron, every, at, timezone, start, end, jitter, misfire, grace, tz)
    probe = start or datetime(2024, 1, 1, tzinfo=UTC)
    if cron is not None and next(_iter_cron(schedule, probe), None) is None:
        raise ValueError(f"cron '{cron.text}' never fires (no such date)")
    return schedule


# ---------------------------------------------------------------- fire times


def _day_instants(cron: CronExpr, day: date, tz: ZoneInfo) -> list[datetime]:
    out: set[datetime] = set()
    for hour in cron.hours:
        for minute in cron.minutes:
            naive = datetime.combine(day, time(hour, minute))
            first = naive.replace(tzinfo=tz, fold=0).astimezone(UTC)
            second = naive.replace(tzinfo=tz, fold=1).astimezone(UTC)
            out.add(first)  # normal, first of a repeated time, or shifted past a gap
            if second != first and second > first and cron.every_hour:
                # a repeated wall-clock time (fold=1 is the later instant): hourly jobs fire twice
                out.add(second)
    return sorted(out)


def _iter_cron(schedule: Schedule, after: datetime) -> Iterator[datetime]:
    """Ascending, each instant once. A day's instants are not always before the next
    day's: a gap that ends the day (America/Nuuk) moves its times onto the next day's,
    and a repeated hour across midnight (America/Goose_Bay until 2011) puts the day's
    second ones after the next day's first. So they are held until no later day's
    instant can come before them (none is earlier than its local midnight less the
    largest UTC offset)."""
    assert schedule.cron is not None
    cron, tz = schedule.cron, schedule.tz
    day = after.astimezone(tz).date() - timedelta(days=1)
    held: list[datetime] = []
    last = after
    for _ in range(HORIZON_DAYS):
        if cron.matches_day(day):
            for instant in _day_instants(cron, day, tz):
                if instant > after:
                    heapq.heappush(held, instant)
        day += timedelta(days=1)
        floor = datetime.combine(day, time(), tzinfo=UTC) - MAX_UTC_OFFSET
        while held and held[0] < floor:
            instant = heapq.heappop(held)
            if instant > last:
                last = instant
                yield instant
    for instant in sorted(held):
        if instant > last:
            last = instant
            yield instant


def _iter_every(schedule: Schedule, after: datetime) -> Iterator[datetime]:
    assert schedule.every is not None
    step = timedelta(seconds=schedule.every)
    anchor = schedule.start or EPOCH
    k = 0 if after < anchor else (after - anchor) // step + 1
    while True:
        yield anchor + k * step
        k += 1


def _iter(schedule: Schedule, after: datetime) -> Iterator[datetime]:
    """Fire times strictly after `after`, inside the window, ascending."""
    after = aware(after)
    if schedule.start is not None and after < schedule.start:
        after = schedule.start - timedelta(microseconds=1)
    if schedule.at is not None:
        source: Iterator[datetime] = iter([schedule.at] if schedule.at > after else [])
    elif schedule.every is not None:
        source = _iter_every(schedule, after)
    else:
        source = _iter_cron(schedule, after)
    for instant in source:
        if schedule.end is not None and instant > schedule.end:
            return
        if schedule.start is not None and instant < schedule.start:
            continue
        yield instant


def aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("naive datetime: pass an aware (UTC) datetime")
    return value.astimezone(UTC)


def next_fire_times(schedule: Schedule, after: datetime, count: int) -> list[datetime]:
    """The next `count` fire times strictly after `after` (fewer if the schedule ends)."""
    out: list[datetime] = []
    if count <= 0:
        return out
    for instant in _iter(schedule, after):
        out.append(instant)
        if len(out) >= count:
            break
    return out


def fire_times_between(schedule: Schedule, start: datetime, end: datetime) -> list[datetime]:
    """Fire times in the half-open interval ``(start, end]``."""
    end = aware(end)
    out: list[datetime] = []
    for instant in _iter(schedule, start):
        if instant > end:
            break
        out.append(instant)
    return out


def jitter_delay(schedule: Schedule, key: str | None, slot: datetime) -> timedelta:
    """A stable pseudo-random delay in ``[0, jitter]`` seconds for this plan and slot
    (`key`: the plan's name; None: no jitter)."""
    if schedule.jitter <= 0 or key is None:
        return timedelta(0)
    digest = hashlib.sha256(f"{key}|{aware(slot).isoformat()}".encode()).digest()
    return timedelta(seconds=int.from_bytes(digest[:8], "big") % (schedule.jitter + 1))


def is_late(schedule: Schedule, key: str | None, slot: datetime, now: datetime) -> bool:
    """True when a fire for `slot` starting at `now` is later than the grace allows."""
    due = aware(slot) + jitter_delay(schedule, key, slot)
    return aware(now) - due > timedelta(seconds=schedule.grace)
