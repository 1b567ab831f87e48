"""Who may change the config file and the plan files: only the user jupcron runs as,
or root.

The config sets `safety.dry_run`, the caps and the guard's limits, and a running
daemon follows it within seconds, signing with a keypair only it may read. So,
like sshd's StrictModes, the file is refused when it belongs to another user, when
group or others may write it, or when its folder lets another user put a file of
their own in its place: a folder of another user, or one group or others may write
without the sticky bit (``/tmp``'s 1777 is fine: there only a file's owner may
rename or delete it). Only the folder the file is in is checked (and, for a
symbolic link, the folder of the file it names), not every folder above it. Group
write is fine where the group is its owner's own (a user private group, no other
member: what a umask of 0002 gives on Debian), as Debian's ssh allows it.

Plan files decide what is traded, how much and to whom (a swap's receiver): `plans
apply`, SIGHUP and the optional path unit apply them, so each plan file (and the
folder it is in) is held to the same rule; a plan file's problem is one of the
apply's problems, and nothing is applied.

Reading is not checked: the config holds no secret (keys live in their own files,
`jupcron.private`). A documented install (root's 0644 file in root's 0755
``/etc/jupcron``) passes, whichever user the service runs as.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path

from jupcron.errors import ConfigError
from jupcron.private import owner_problem

CONFIG = ("config file", "dry run, caps, the guard's limits")
PLANS = ("plan file", "what is traded, how much, and to whom")


def check_file(path: Path, info: os.stat_result) -> None:
    """Refuse (`ConfigError`, one line with the fix) the config file `path`, whose
    ``fstat`` is `info` (the file read, not whatever the path names a moment later),
    when a user other than jupcron's or root may change it or its folder."""
    problem = untrusted(path, info, CONFIG)
    if problem is not None:
        raise ConfigError(problem)


def untrusted(path: Path, info: os.stat_result, kind: tuple[str, str]) -> str | None:
    """Why a user other than jupcron's or root may change the file `path` (its
    ``fstat``: `info`) or put another in its place, as one line with the fix; None
    if none may. `kind`: what the file is, and what it decides."""
    what, decides = kind
    owned = owner_problem(path, info, what, decides)
    if owned is not None:
        return f"{path}: {owned}"
    mode = stat.S_IMODE(info.st_mode)
    if _others_may_write(info):
        return (
            f"{path}: permissions {mode:04o} are too open: group or others may change the "
            f"{what} ({decides}); run: chmod go-w {path}"
        )
    for folder in _folders(path):
        problem = folder_problem(path, folder, what)
        if problem is not None:
            return problem
    return None


def _folders(path: Path) -> list[Path]:
    """The folder of `path` as given and, when it is a symbolic link, of its target."""
    given = Path(os.path.abspath(path)).parent
    real = Path(os.path.realpath(path)).parent
    return [given] if real == given else [given, real]


def folder_problem(path: Path, folder: Path, what: str) -> str | None:
    """Why another user may put a file in place of `path` in `folder` (None: none may)."""
    try:
        flaw = _folder_flaw(os.stat(folder))
    except OSError as exc:
        return f"{path}: cannot check its folder {folder}: {exc.strerror}"
    if flaw is None:
        return None
    fix = f"as root: chown {os.geteuid()} {folder}" if flaw.startswith("belongs") \
        else f"chmod go-w {folder}"  # fmt: skip
    return (
        f"{path}: its folder {folder} {flaw}: another user may put another {what} in "
        f"its place; run {fix}"
    )


def _folder_flaw(info: os.stat_result) -> str | None:
    """What lets another user replace or delete a file in a folder (its ``stat``):
    ``belongs to uid N`` (not jupcron's user nor root), ``has permissions 0777``
    (group or others may write, no sticky bit); None if nothing does."""
    if info.st_uid not in (os.geteuid(), 0):
        return f"belongs to uid {info.st_uid}"
    mode = stat.S_IMODE(info.st_mode)
    if _others_may_write(info) and not mode & stat.S_ISVTX:
        return f"has permissions {mode:04o}"
    return None


def _others_may_write(info: os.stat_result) -> bool:
    """Others may write it, or its group may and that group is not its owner's own."""
    if info.st_mode & stat.S_IWOTH:
        return True
    return bool(info.st_mode & stat.S_IWGRP) and not _private_group(info)


def _private_group(info: os.stat_result) -> bool:
    """Is the group of the file its owner's private group (the owner's primary group,
    with no other member)? A member is listed in the group (``gr_mem``) or holds it as
    primary group, which ``gr_mem`` never lists (SUSE's ``users``, ``nogroup``): every
    user is looked at, as Debian's ssh does."""
    try:
        owner = pwd.getpwuid(info.st_uid)
        group = grp.getgrgid(info.st_gid)
    except KeyError:
        return False
    if owner.pw_gid != info.st_gid or any(m != owner.pw_name for m in group.gr_mem):
        return False
    return all(u.pw_uid == owner.pw_uid for u in pwd.getpwall() if u.pw_gid == info.st_gid)


def access_of(path: Path) -> tuple[int, ...]:
    """What the checks above look at (the modes and owners of the file and its
    folders), to tell whether a refused file may pass now; empty if it cannot be read."""
    out: list[int] = []
    try:
        for where in (path, *_folders(path)):
            info = os.stat(where)
            out += (info.st_mode, info.st_uid)
    except OSError:
        return ()
    return tuple(out)


def kill_switch_problem(path: Path) -> str | None:
    """Why another user may delete the kill switch file `path` (and so let runs be
    ordered again): its folder belongs to another user, or group or others may write
    it without the sticky bit; None if no one but jupcron's user or root may."""
    folder = Path(os.path.abspath(path)).parent
    try:
        flaw = _folder_flaw(os.stat(folder))
    except OSError:
        return None  # no folder yet: creating it is the operator's, and says so
    if flaw is None:
        return None
    return f"{folder} {flaw}: another user may delete the kill switch file there, and " \
        "runs would be ordered again"  # fmt: skip
