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

import re
import zoneinfo
from collections.abc import Iterable
from typing import Any

import tzdata  # type: ignore[import-untyped]  # (no stubs: IANA_VERSION is a str)

TZDATA_VERSION: str = tzdata.IANA_VERSION  # e.g. "2026f": the release every zone is read from


def use_tzdata_package() -> None:
    """Read every zone from the tzdata package: no system folder is searched (whatever
    ``PYTHONTZPATH`` or the OS says), and a zone already loaded from one is dropped."""
    zoneinfo.reset_tzpath(to=[])
    zoneinfo.ZoneInfo.clear_cache()


VERSION_WIDTH = 32  # daemon_nodes.version is a VARCHAR(32) (PostgreSQL refuses longer)
_TZDATA = re.compile(r" tzdata (\S+)$")


def with_tzdata(version: str, tz: str = TZDATA_VERSION) -> str:
    """``0.1.0 tzdata 2026f``: a heartbeat's version with the tz data release this
    process reads zones from, in the column there is (no migration); the software's
    version is cut, never the release, should the two not fit."""
    suffix = f" tzdata {tz}"
    return version[: VERSION_WIDTH - len(suffix)] + suffix


def tzdata_of(version: str) -> str | None:
    """The tz data release a heartbeat's version names (None: a daemon from before
    it said, which read the system's zone files)."""
    found = _TZDATA.search(version)
    return found.group(1) if found else None


def tz_data(running: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The tz data release this process and each running daemon (node, heartbeat
    version) read zones from (``unknown``: a daemon from before it said, which read the
    system's files). A slot is an instant worked out from a zone's rules, stored by
    `plans apply` and then by each daemon in turn: where the releases differ, one
    plan's slots can too (a fire twice in a day, or none)."""
    nodes = {node: tzdata_of(version) or "unknown" for node, version in running}
    return {"here": TZDATA_VERSION, "nodes": nodes,
            "differ": any(v != TZDATA_VERSION for v in nodes.values())}  # fmt: skip
