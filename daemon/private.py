"""Private files: reading secrets only from files no one else can read or change,
and creating the files jupcron writes (database, logs, the demo's files) as 0600.

A secret file (the keypair, the API key) is refused, like ssh refuses a private
key, when it is not a regular file, when it belongs to someone other than the
user jupcron runs as or root, or when group or others may access it. One
exception: systemd credentials (in ``$CREDENTIALS_DIRECTORY`` or under
``/run/credentials/``) are root's files of mode 0400 with an access-control
entry for the service's user, which ``stat`` shows as 0440; group read is
accepted there, on a read-only file system that only systemd writes.

A process that reads a secret leaves no core dump from then on (`no_core_dumps`):
a dump is the process's memory, the secret's bytes in it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from jupcron.errors import FatalError

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700
SYSTEMD_CREDENTIALS = Path("/run/credentials")
MAX_SECRET_BYTES = 64 * 1024


def is_credential(file: Path, env: Mapping[str, str] | None = None) -> bool:
    """True when ``file`` sits in a systemd credentials directory."""
    env = os.environ if env is None else env
    folder = Path(os.path.abspath(file)).parent
    given = env.get("CREDENTIALS_DIRECTORY")
    if given and folder == Path(os.path.abspath(given)):
        return True
    return folder.parent == SYSTEMD_CREDENTIALS


def owner_problem(path: Path, info: os.stat_result, what: str, decides: str = "") -> str | None:
    """Why the file `path` (its ``fstat``: `info`) is not to be trusted for who owns it
    (a user other than the one jupcron runs as, or root, who could change it), with the
    fix; None when it is jupcron's user's or root's. `what`: what the file is ("keypair
    file"); `decides`: what it decides, said with the owner's power over it. The same
    rule for secret files and for the config and plan files (`jupcron.config.trust`)."""
    me = os.geteuid()
    if info.st_uid in (me, 0):
        return None
    power = f" ({decides})" if decides else ""
    return (
        f"the {what} belongs to uid {info.st_uid}, who could change it{power}; it must "
        f"belong to the user jupcron runs as (uid {me}) or root; run as root: chown {me} {path}"
    )


def no_core_dumps() -> None:
    """No core dump of this process from now on, whoever asks for one.

    systemd raises the core size limit to infinity for every service, and
    systemd-coredump keeps a dump as large as that limit allows: a crash (a
    segfault, a Rust panic aborting in solders) wrote the keypair's text and secret
    bytes to /var/lib/systemd/coredump, or as ``core`` in the working folder. Soft
    and hard limit 0: nothing in this process can raise it again (that takes
    privilege), and the children it starts inherit it."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def read_private(
    file: Path,
    what: str,
    error: type[FatalError],
    env: Mapping[str, str] | None = None,
    missing: str | None = None,
) -> bytes:
    """The bytes of secret file ``file`` (``what``: "keypair", "API key"), after the
    checks above; every refusal is one ``error`` line naming the file and the fix
    (``missing``: what to say when there is no such file). The process dumps no
    core from the first call on (`no_core_dumps`)."""

    def fail(problem: str) -> NoReturn:
        raise error(f"{file}: {problem}")

    no_core_dumps()  # before the secret is in memory
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK  # a FIFO cannot hang us
    try:
        fd = os.open(file, flags)
    except FileNotFoundError:
        fail(missing or f"{what} file not found")
    except OSError as exc:
        fail(f"cannot read the {what} file: {exc.strerror}")
    try:
        info = os.fstat(fd)  # the file we read, not whatever the path names a moment later
        if not stat.S_ISREG(info.st_mode):
            fail(f"the {what} path is not a regular file")
        owned = owner_problem(file, info, f"{what} file")
        if owned is not None:
            fail(owned)
        mode = stat.S_IMODE(info.st_mode)
        allowed = 0o040 if is_credential(file, env) else 0
        if mode & 0o077 & ~allowed:
            fail(
                f"permissions {mode:04o} are too open: the {what} file is accessible "
                f"by group or others; run: chmod 600 {file}"
            )
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 65536):
            size += len(chunk)
            if size > MAX_SECRET_BYTES:
                fail(f"the {what} file is larger than {MAX_SECRET_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        fail(f"cannot read the {what} file: {exc.strerror}")
    finally:
        os.close(fd)


def create_private(path: Path) -> bool:
    """Create ``path`` empty with mode 0600 unless it exists; True if it was created.

    SQLite then gives its -wal and -shm files the database file's mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, PRIVATE_FILE)  # whatever the umask
    finally:
        os.close(fd)
    return True


def open_private(path: Path, *, append: bool = False) -> int:
    """A descriptor for writing ``path``, which is created 0600 (or truncated)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600."""
    with os.fdopen(open_private(path), "w", encoding="utf-8") as out:
        out.write(text)


def _fsync_folder(folder: Path) -> None:
    """Make a new entry in ``folder`` durable: fsync of a file alone does not write the
    folder that names it, and after a power cut the file could be gone. A file system
    that cannot fsync a folder (EINVAL: some FUSE and network mounts) is let be: the
    file is there, and refusing would leave it unannounced."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
            raise
    finally:
        os.close(fd)


# what link() says on a file system without hard links (vfat, some FUSE mounts)
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS})


def _write_synced(fd: int, data: bytes) -> None:
    """Write ``data`` through ``fd`` (closed after), mode 0600 whatever the umask, and
    fsync it: on disk before anyone is told the file exists."""
    with os.fdopen(fd, "wb") as out:
        os.fchmod(out.fileno(), PRIVATE_FILE)
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (O_EXCL, 0600) holding ``data``, fsynced; removed if writing fails."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        _write_synced(fd, data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def create_private_whole(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``, mode 0600 from its first byte, durably and
    whole; FileExistsError when ``path`` exists (never overwritten, a symlink there
    never followed). The data goes to a new file in the same folder, fsynced, then
    hard-linked as ``path``: a crash at any point leaves no half file at ``path``
    (a key whose address was printed is on disk; one that is not, is not there)."""
    # the name cut short: a long one plus the temporary's dots would pass NAME_MAX
    fd, temp = tempfile.mkstemp(prefix=f".{path.name[:64]}.", suffix=".tmp", dir=path.parent)
    try:
        _write_synced(fd, data)
        try:
            os.link(temp, path)  # EEXIST whatever is at path: no overwrite, no race
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            _write_new(path, data)  # vfat and the like: not atomic, still durable
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    _fsync_folder(path.parent)


def replace_private(path: Path, data: bytes) -> None:
    """Write ``data`` as the file ``path``, mode 0600 whatever the umask, atomically:
    to a new file in the same folder, then renamed over ``path``. A symlink planted
    at ``path`` is replaced, never followed; a reader sees the old file or the new,
    never half of one."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        _write_synced(fd, data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
