"""Which files a plan path names: a file as it is, a folder's ``*.yaml``/``*.yml``
files (recursively, hidden ones skipped, symlinked folders not followed), each file
once, with a problem for whatever cannot be listed or stored (`plan_files`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from jupcron.errors import Problem

SUFFIXES = (".yaml", ".yml")


def plan_files(paths: Iterable[Path]) -> tuple[list[Path], list[Problem]]:
    """Expand folders into their plan files; a missing path is a problem. A folder's
    entry named like a plan file is one, whatever it is but a folder (a dangling
    symlink, a FIFO: the read says why it is no plan file, and nothing is applied)."""
    files: list[Path] = []
    problems: list[Problem] = []
    for path in paths:
        if path.is_dir():
            found, unread = _folder_files(path)
            problems += unread
            if not found and not unread:
                problems.append(Problem(str(path), 0, 0, "no plan files (*.yaml, *.yml) here"))
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            problems.append(Problem(str(path), 0, 0, "no such file or directory"))
    unique: list[Path] = []
    seen: set[Path] = set()
    for file in files:
        if not _utf8(file):
            problems.append(Problem(_shown(file), 0, 0, NOT_UTF8_NAME))
            continue
        key = Path(os.path.realpath(file))  # (`Path.resolve` raises on a symlink loop)
        if key not in seen:
            seen.add(key)
            unique.append(file)
    return unique, problems


# a name the store cannot hold (a plan's ``source``), nor a log or terminal show as is
NOT_UTF8_NAME = "the file's name is not UTF-8 text: rename it"


def _utf8(file: Path) -> bool:
    """Is the file's path UTF-8 text? (Python holds a name of other bytes with
    surrogates, which no UTF-8 encoder takes: the store refused it mid-apply, with
    an error no caller expects.)"""
    try:
        str(file).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(file: Path) -> str:
    """The path with each byte that is not UTF-8 written as ``\\xNN``."""
    return os.fsencode(file).decode("utf-8", "backslashreplace")


def _folder_files(folder: Path) -> tuple[list[Path], list[Problem]]:
    """A folder's plan files, sorted (hidden files and folders left out, symlinked
    folders not followed), and a problem for each folder in it that could not be
    listed: its files are not known, so an apply must not take them for removed
    (`Path.rglob` skipped such a folder in silence, and its plans were disabled)."""
    found: list[Path] = []
    unread: list[Problem] = []

    def failed(exc: OSError) -> None:
        where = exc.filename if exc.filename is not None else folder
        unread.append(Problem(str(where), 0, 0, f"cannot read this folder ({exc.strerror})"))

    for top, dirs, names in os.walk(folder, onerror=failed):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(top)
        found += [
            base / name
            for name in names
            if not name.startswith(".") and Path(name).suffix in SUFFIXES
        ]
    return sorted(found), unread
