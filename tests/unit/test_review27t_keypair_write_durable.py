"""`jupcron wallet new PATH` prints an address the operator then funds: the key behind
it must be on disk, whole, before the address is printed, and a crash while writing
must leave no half key at PATH (which `wallet new` would then refuse to overwrite and
`load_wallet` would refuse to read)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jupcron.chain.wallet import load_wallet, write_keypair_file


def test_the_new_keypair_and_its_folder_entry_are_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: set[tuple[int, int]] = set()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        synced.add((info.st_dev, info.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "keypair.json"
    wallet = write_keypair_file(path)
    file, folder = path.stat(), tmp_path.stat()
    assert (file.st_dev, file.st_ino) in synced, "the keypair file was never fsynced"
    assert (folder.st_dev, folder.st_ino) in synced, "its folder entry was never fsynced"
    assert load_wallet(path) == wallet


def test_a_crash_while_writing_leaves_no_half_key_at_the_path(tmp_path: Path) -> None:
    path = tmp_path / "keypair.json"
    # the kernel kills the writer (SIGXFSZ) once the file reaches 100 bytes: a crash
    # in the middle of writing the key, with no Python handler run
    code = textwrap.dedent(f"""
        import resource, signal
        from pathlib import Path
        from jupcron.chain.wallet import write_keypair_file
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
        write_keypair_file(Path({str(path)!r}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert done.returncode == -signal.SIGXFSZ, done.stderr.decode()
    assert not path.exists(), f"a half key was left at the path ({path.stat().st_size} bytes)"
    wallet = write_keypair_file(path)  # the operator simply runs `wallet new` again
    assert load_wallet(path) == wallet
