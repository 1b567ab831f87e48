"""Review 22d: a process that has read a secret leaves no core dump.

systemd raises the core size limit to infinity for every service, and
systemd-coredump keeps what that limit allows; a crash of the daemon (a segfault,
a Rust panic that aborts inside solders) then wrote its memory to disk: the
keypair file's text and its secret bytes, four times each in a real dump. Real
processes, a real keypair file, a real abort.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SOFT_AS_SYSTEMD = textwrap.dedent(
    """
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))  # as systemd gives a service
    """
)

LOAD_WALLET = textwrap.dedent(
    """
    from pathlib import Path
    from jupcron.chain.wallet import load_wallet, write_keypair_file
    write_keypair_file(Path("keypair.json"))
    load_wallet(Path("keypair.json"))
    """
)


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def _hard_limit_allows_cores() -> bool:
    return resource.getrlimit(resource.RLIMIT_CORE)[1] != 0


@pytest.mark.skipif(not _hard_limit_allows_cores(), reason="core dumps are off for this user")
def test_reading_the_keypair_turns_core_dumps_off_for_good(tmp_path: Path) -> None:
    code = SOFT_AS_SYSTEMD + LOAD_WALLET + "print(*resource.getrlimit(resource.RLIMIT_CORE))\n"
    result = _python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "0"], result.stdout  # soft and hard: for good


def _core_files_land_here() -> bool:
    pattern = Path("/proc/sys/kernel/core_pattern")
    if not pattern.exists():
        return False
    text = pattern.read_text().strip()
    return bool(text) and not text.startswith("|") and "/" not in text


@pytest.mark.skipif(
    not (_hard_limit_allows_cores() and _core_files_land_here()),
    reason="this machine's cores do not land in the working folder",
)
def test_a_crash_after_the_keypair_is_read_writes_no_dump(tmp_path: Path) -> None:
    control = tmp_path / "control"
    control.mkdir()
    _python(SOFT_AS_SYSTEMD + "import os\nos.abort()\n", control)
    if not [p for p in control.iterdir() if p.name.startswith("core")]:
        pytest.skip("no core dump even without a secret: nothing to compare")

    crashed = tmp_path / "crashed"
    crashed.mkdir()
    result = _python(SOFT_AS_SYSTEMD + LOAD_WALLET + "import os\nos.abort()\n", crashed)
    assert result.returncode < 0  # it did crash
    keypair = (crashed / "keypair.json").read_text().strip()
    seed = bytes(json.loads(keypair))[:32]
    for left in crashed.iterdir():
        if left.name == "keypair.json":
            continue
        data = left.read_bytes()
        assert keypair.encode() not in data, left
        assert seed not in data, left
    assert sorted(p.name for p in crashed.iterdir()) == ["keypair.json"]
