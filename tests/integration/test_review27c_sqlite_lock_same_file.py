"""One SQLite file, one daemon (DESIGN §6), however the file is named (review 27c).

The single-daemon lock is a ``flock`` on ``<path>.lock``, with ``<path>`` the database
URL's text as written: a second daemon whose config names the same file another way
took a lock file of its own and led too, two schedulers and two recoveries on one
file (recovery at a SQLite start takes even fresh runs: the other daemon's, in flight).

* through a symlink (``/var/lib/jupcron/jupcron.db -> /data/jupcron.db``, one config
  with each path): two lock files, two leaders;
* as a SQLite URI (``sqlite:///file:/data/jupcron.db?uri=true``, which the store
  opens as the file): the lock file was ``file:/data/jupcron.db.lock``, a path
  relative to the working folder, and the daemon could not start at all (or, with a
  ``file:`` folder there, took a lock nobody else looks at).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.errors import StoreError
from jupcron.service.leader import leadership_for


def _sole(first_url: str, second_url: str) -> None:
    """The first takes the lock; the second, naming the same file, is refused."""
    first, second = leadership_for(first_url), leadership_for(second_url)
    try:
        assert first.acquire() is True
        with pytest.raises(StoreError, match="another jupcron daemon is already using"):
            second.acquire()
        assert second.is_leader() is False
    finally:
        first.release()
        second.release()


def test_a_symlink_to_the_file_is_the_same_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "jupcron.db"
    real.touch()
    link = tmp_path / "jupcron.db"
    link.symlink_to(real)
    _sole(f"sqlite:///{real}", f"sqlite:///{link}")


def test_a_uri_naming_the_file_is_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no "file:" folder here
    real = tmp_path / "jupcron.db"
    real.touch()
    _sole(f"sqlite:///{real}", f"sqlite:///file:{real}?uri=true")
