"""`jupcron wallet new` holds a fresh secret key in memory as surely as a process that
reads one (`jupcron.private.no_core_dumps`): a crash while it writes (a full disk
making the Rust side panic, a signal) must not leave the key in a core dump, in the
working folder or in /var/lib/systemd/coredump."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


@pytest.mark.skipif(
    resource.getrlimit(resource.RLIMIT_CORE)[1] == 0, reason="core dumps are off for this user"
)
def test_writing_a_new_keypair_turns_core_dumps_off(tmp_path: Path) -> None:
    code = textwrap.dedent("""
        import resource
        from pathlib import Path
        from jupcron.chain.wallet import write_keypair_file
        soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))  # as systemd gives a service
        write_keypair_file(Path("keypair.json"))
        print(*resource.getrlimit(resource.RLIMIT_CORE))
    """)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0"], f"core dumps still allowed: {done.stdout}"
