"""Zone rules come from the tzdata package only (a dependency), never the system's.

`ZoneInfo` looks a name up in the system's zoneinfo folders first (``TZPATH``:
/usr/share/zoneinfo…, or ``PYTHONTZPATH``) and falls back to the tzdata package.
A plan's slots are instants worked out from its timezone's rules: `plans apply`
stores the first as the applying host reads the zone, each daemon (leader, standby,
the same host after an OS tzdata upgrade) the next ones as *it* reads it. Where two
hosts' rules differ (the OS and the package are seldom the same release), one
wall-clock time is two instants and a plan fires twice that day, or not at all.

So every jupcron process empties the search path once, at the package's import
(`jupcron/__init__.py`), before any zone is read: the CLI, the daemon, the demo and
every spawned worker (which imports jupcron to unpickle its task) read the one
release pinned with the install (`TZDATA_VERSION`, which the heartbeat carries and
`jupcron status` compares across nodes).
"""

from __future__ import annotations

import zoneinfo

import tzdata  # type: ignore[import-untyped]  # (no stubs: IANA_VERSION is a str)

TZDATA_VERSION: str = tzdata.IANA_VERSION  # e.g. "2026f": the release every zone is read from


def use_tzdata_package() -> None:
    """Read every zone from the tzdata package: no system folder is searched (whatever
    ``PYTHONTZPATH`` or the OS says), and a zone already loaded from one is dropped."""
    zoneinfo.reset_tzpath(to=[])
    zoneinfo.ZoneInfo.clear_cache()
