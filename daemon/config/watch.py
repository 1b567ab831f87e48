"""Does a file hold other content than the one in effect? Asked once a loop turn,
cheaply: a stat each look, a read (and a hash) only once a changed file held still.

    each look: stat the file (device, inode, size, mtime, ctime; no read)
      the same as at the last look ─► nothing
      changed ─► look again next turn: an editor may still be writing it
      held still for a look (or written in the last 2 s) ─► read and hash it
          the content in effect, or the content last refused (with the
          modes and owners it had: `chmod go-w` on a refused file makes it due
          again, jupcron.config.trust) ─► nothing
          else ─► due: the caller loads it

An editor that saves by writing a new file and renaming it over the old one
changes the inode; one that rewrites in place changes size or mtime; a
`touch` changes only the times, and the hash then finds the same content.
The daemon watches its config file (daemon/service/reload.py) and the page its
token file (daemon/web/serve.py) this way.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jupcron.config import config_digest
from jupcron.config.trust import access_of

RECENT_NS = 2_000_000_000  # a file written less than this ago is read at each look
UNREADABLE = "unreadable"  # the digest of a file that cannot be read (no such file, say)


_NEVER = object()  # no look yet (`None` is the stat of a missing file)


@dataclass(frozen=True)
class FileKey:
    """What a stat tells of a file's identity and content, without reading it."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


def file_key(path: Path) -> FileKey | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileKey(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def content_digest(path: Path) -> str:
    try:
        return config_digest(path.read_bytes())
    except OSError:
        return UNREADABLE


class ConfigWatch:
    """Tells when the config file holds content other than the config in effect."""

    def __init__(
        self, path: Path, current: str, *, wall_ns: Callable[[], int] = time.time_ns
    ) -> None:
        self.path = path
        self.current = current  # the digest of the config in effect
        self.refused: str | None = None  # the digest of the content last refused
        # the modes and owners it was refused with (None: any, it is refused as it is)
        self.refused_access: tuple[int, ...] | None = None
        self.seen = current  # the digest `due` last read
        self.access: tuple[int, ...] = ()  # the modes and owners when `due` last read
        self._wall_ns = wall_ns
        self._key = file_key(path)  # the stat of the file as last read
        self._moving: object = _NEVER  # the stat at the last look

    def due(self) -> bool:
        """One look: a stat; a read once a changed file held still for a look."""
        key = file_key(self.path)
        if key == self._key and not self._recent(key):
            self._moving = key
            return False
        if key != self._moving:  # changed since the last look: an editor may be writing
            self._moving = key
            return False
        self._key = key
        self.seen = content_digest(self.path)
        self.access = access_of(self.path)
        if self.seen == self.current:
            return False
        return self.seen != self.refused or self.refused_access not in (None, self.access)

    def _recent(self, key: FileKey | None) -> bool:
        """Written a moment ago: a second write in the same timestamp tick, of the same
        size, would leave the stat as it is, so such a file is read again each look."""
        return key is not None and abs(self._wall_ns() - key.mtime_ns) < RECENT_NS
