"""A running daemon follows its config file: a changed file is re-read by itself.

    each loop turn (about 1 s): stat the file (device, inode, size, mtime, ctime; no read)
      the same as at the last look ─► nothing
      changed ─► look again next turn: an editor may still be writing it
      held still for a turn ─► read and hash it
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from daemon.config import Config, config_digest, load_config
from daemon.errors import JupcronError

log = structlog.get_logger(__name__)

# what the daemon reads only at start: a change is reported, and waits for a restart
RESTART_ONLY = (
    "api", "wallet", "database", "rpc", "metrics", "web", "notify", "logging", "follow",
    "runner.workers", "runner.group_commit",
)  # fmt: skip
UNREADABLE = "unreadable"  # the digest of a file that cannot be read (no such file, say)


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

    def __init__(self, path: Path, current: str) -> None:
        self.path = path
        self.current = current  # the digest of the config in effect
        self.refused: str | None = None  # the digest of the content last refused
        self.seen = current  # the digest `due` last read
        self._key = file_key(path)  # the stat of the file as last read
        self._moving: FileKey | None = None
        self._moved = False  # the stat changed at the last look

    def due(self) -> bool:
        """One look (a stat; a read only once a changed file has held still)."""
        key = file_key(self.path)
        if key == self._key and not self._moved:
            return False
        if not self._moved or key != self._moving:
            self._moving, self._moved = key, True
            return False
        self._key, self._moved = key, False
        self.seen = content_digest(self.path)
        return self.seen not in (self.current, self.refused)


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flat(sub, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): value}


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def config_changes(old: Config, new: Config) -> list[str]:
    """What differs, one ``key: old -> new`` each; values as `model_dump` shows them,
    so a URL's secret is masked (the config holds no other secret)."""
    skip = {"source", "digest"}
    before = _flat(old.model_dump(mode="json", exclude=skip))
    after = _flat(new.model_dump(mode="json", exclude=skip))
    return [
        f"{key}: {_shown(before.get(key))} -> {_shown(after.get(key))}"
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    ]


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
