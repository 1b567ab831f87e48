"""A running daemon follows its config file: a changed file is re-read by itself.

    each loop turn (about 1 s): stat the file (device, inode, size, mtime, ctime; no read)
      the same as at the last look ─► nothing
      changed ─► look again next turn: an editor may still be writing it
      held still for a turn (or written in the last 2 s) ─► read and hash it
          the content in effect, or the content last refused ─► nothing
          else ─► load it (as SIGHUP does): valid ─► in effect for every run that starts
                  from now on, `config_reloaded` says what changed; invalid ─► the old
                  config stays whole, `reload_failed` says why (once per bad content)

An editor that saves by writing a new file and renaming it over the old one
changes the inode; one that rewrites in place changes size or mtime; a
`touch` changes only the times, and the hash then finds the same content.
Credentials (`$CREDENTIALS_DIRECTORY`) are not watched: they are read at start.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel

from jupcron.config import MASKED, Config, config_digest, load_config, mask_url
from jupcron.errors import JupcronError

log = structlog.get_logger(__name__)

# what the daemon reads only at start: a change is reported, and waits for a restart
RESTART_ONLY = (
    "api", "wallet", "wallets", "database", "rpc", "metrics", "web.listen", "notify", "logging",
    "follow", "runner.workers", "runner.group_commit",
)  # fmt: skip
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
        self.seen = current  # the digest `due` last read
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
        return self.seen not in (self.current, self.refused)

    def _recent(self, key: FileKey | None) -> bool:
        """Written a moment ago: a second write in the same timestamp tick, of the same
        size, would leave the stat as it is, so such a file is read again each look."""
        return key is not None and abs(self._wall_ns() - key.mtime_ns) < RECENT_NS


def _leaves(model: BaseModel, prefix: str = "") -> dict[str, tuple[Any, str]]:
    """Each setting's dotted key: its value, and how a log line may show it."""
    out: dict[str, tuple[Any, str]] = {}
    for name, info in type(model).model_fields.items():
        if not prefix and name in ("source", "digest"):
            continue
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            out.update(_leaves(value, f"{prefix}{name}."))
        elif MASKED in info.metadata and isinstance(value, str):
            out[prefix + name] = (value, mask_url(value))
        else:
            out[prefix + name] = (value, _shown(value))
    return out


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def config_changes(old: Config, new: Config) -> list[str]:
    """What differs, one ``key: old -> new`` each, a URL's secret masked (the config
    holds no other secret: keys are in files, read at start)."""
    before, after = _leaves(old), _leaves(new)
    missing: tuple[Any, str] = (None, "none")
    out = []
    for key in sorted(before.keys() | after.keys()):
        (was, was_shown), (now, now_shown) = before.get(key, missing), after.get(key, missing)
        if was == now:
            continue
        if was_shown == now_shown:
            out.append(f"{key}: changed (its secret part is masked)")
        else:
            out.append(f"{key}: {was_shown} -> {now_shown}")
    return out


def restart_only(changes: list[str]) -> list[str]:
    """The changed keys that take effect only at the next start."""
    keys = [change.split(":", 1)[0] for change in changes]
    return [k for k in keys if any(k == p or k.startswith(p + ".") for p in RESTART_ONLY)]


class ConfigFile:
    """The daemon's config file: read on demand (SIGHUP) or when it changed."""

    def __init__(self, path: Path, env: Mapping[str, str], current: Config) -> None:
        self.path = path
        self.env = env
        self.watch = ConfigWatch(path, current.digest)

    def read(self, current: Config, trigger: str) -> Config | None:
        """The file's config, or ``None`` (logged) when it does not load: `current` stays."""
        try:
            return load_config(self.path, self.env)
        except JupcronError as exc:
            log.error("reload_failed", what="config", trigger=trigger, error=str(exc),
                      kept=current.digest, dry_run=current.safety.dry_run)  # fmt: skip
            return None

    def changed(self, current: Config) -> Config | None:
        """A loop turn: the file's new config if its content changed and loads."""
        if not self.watch.due():
            return None
        config = self.read(current, "file")
        if config is None:
            self.watch.refused = self.watch.seen  # said once; tried again when it changes
        return config

    def in_effect(self, old: Config, new: Config, trigger: str) -> None:
        """`new` replaced `old`: say what changed, and what waits for a restart."""
        self.watch.current, self.watch.refused = new.digest, None
        changes = config_changes(old, new)
        for key in restart_only(changes):
            log.warning("reload_needs_restart", section=key)
        if changes or new.digest != old.digest:
            log.info("config_reloaded", trigger=trigger, changed=changes, config=new.digest,
                     previous=old.digest, dry_run=new.safety.dry_run)  # fmt: skip
