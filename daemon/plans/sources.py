"""Where a plan came from (its ``source``), and whether that file is gone.

A plan's source is its file as found: the absolute path of the entry in the folder
(or the path given), symlinks kept. That entry is what an operator removes to stop
a plan, or what a release switch of a linked ``plans.dir`` takes away: its target may
well be still there (a git checkout, the previous release), so a source stored by its
target never looked gone and its plan stayed enabled, firing, after an apply of the
folder (SIGHUP's, which is not the complete set).

The same file may be reached by two paths (a linked folder and its target): a
stored source is scanned when it names one of the files read (`Gone`), by its
path or as the same file (device and inode), so a plan renamed in that file is a
removal of the old name whichever path was applied (else both names would fire).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Collection
from pathlib import Path

from jupcron.errors import PlanError, Problem


def source_of(file: Path) -> str:
    """A plan file's ``source``: absolute, symlinks not resolved."""
    return os.path.abspath(file)


class Gone:
    """Is a stored plan's file gone, so that an apply of some files, not the complete
    set, disables its plans (`jupcron.store.plansync.PlanSync.finish`)? Yes when the
    apply is the complete set, or read that file (by this path, or another to the same
    file: device and inode),
    or the file is not there. A file whose presence cannot be told (a folder the user
    may not look into: EACCES) is a problem, never an answer: the apply is refused
    (`raise_for_problems`: `PlanError`) rather than keep or disable plans on a guess,
    and the daemon's SIGHUP, which reports a `JupcronError` and goes on, is not ended
    by the `PermissionError` that `Path.exists` raised."""

    def __init__(self, scanned: Collection[str] | None) -> None:
        self.scanned = scanned
        self.problems: list[Problem] = []
        self._unsure: set[str] = set()
        self._identities: set[tuple[int, int]] | None = None  # of `scanned`, on first need

    def identities(self) -> set[tuple[int, int]]:
        """Which files the scanned sources are (device, inode)."""
        if self._identities is None:
            self._identities = set()
            for path in self.scanned or ():
                try:
                    found = os.stat(path)
                except OSError:
                    continue  # (read a moment ago; gone since: no other path can be it)
                self._identities.add((found.st_dev, found.st_ino))
        return self._identities

    def __call__(self, source: str | None) -> bool:
        if self.scanned is None or source is None or source in self.scanned:
            return True
        try:
            found = os.stat(source)
        except OSError as exc:
            if exc.errno in ABSENT:
                return True
            if source not in self._unsure:
                self._unsure.add(source)
                self.problems.append(Problem(source, 0, 0, (
                    f"cannot tell whether this plan file is still there ({exc.strerror}): "
                    "its stored plans would be neither kept nor disabled on a guess; "
                    "nothing applied (let this user see it, or apply the complete set: "
                    "'jupcron plans apply' without paths)"
                )))  # fmt: skip
            return False
        return (found.st_dev, found.st_ino) in self.identities()

    def raise_for_problems(self) -> None:
        if self.problems:
            raise PlanError(self.problems)


# what `Path.exists` took for "not there": no such entry, a path through a file, a
# symlink loop
ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
