"""What a plan file was when it was read: its stat and the SHA-256 of its bytes.

A complete `plans apply` records each file's mark in the store
(`jupcron.store.planfiles`); `jupcron status` then tells whether ``plans.dir``
still says what the store holds by stat, and reads only the files whose stat
changed (a file touched but not changed is still in sync).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

RACY_NS = 2_000_000_000  # a file modified this shortly before it was read: its stat is no proof
RACY = -1  # the mtime recorded for such a file: no stat matches it, it is read each time


@dataclass(frozen=True)
class FileMark:
    path: str  # as `jupcron.plans.files.plan_files` lists it
    size: int
    mtime_ns: int
    sha256: str


def stat_of(file: Path) -> os.stat_result | None:
    """The file's stat, taken before it is read (a change after it shows as a newer
    stat); None if it cannot be had (the read says why)."""
    try:
        return file.stat()
    except OSError:
        return None


def mark_of(file: Path, stat: os.stat_result, raw: bytes) -> FileMark:
    """The file's mark; a file modified less than `RACY_NS` before (or after: a clock
    ahead) is marked `RACY`: a write in the same tick of the file system's clock, of the
    same size, would leave its stat as it was (git's "racy" files)."""
    now = time.time_ns()
    mtime = stat.st_mtime_ns
    if not mtime < now - RACY_NS:
        mtime = RACY
    return FileMark(str(file), stat.st_size, mtime, digest(raw))


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()
