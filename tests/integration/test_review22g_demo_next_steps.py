"""What `jupcron demo` prints to run next must run as printed, in the shell the
operator typed `make demo` in.

`make demo` installs jupcron into the clone's `.venv` and never puts `.venv/bin`
on the operator's PATH, so a bare `jupcron ...` printed at the end was
'command not found' for exactly the person the demo is for. A `--dir` with a
space in it broke every printed line too (the paths were not quoted).

Real components: the demo's workspace (keypair, migrated SQLite, config, plans,
the emulator on loopback), its real summary, and each printed line run by a real
shell with a PATH that holds neither `.venv/bin` nor any other jupcron.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from jupcron.demo.driver import DemoResult, print_summary
from jupcron.demo.workspace import create

# a login shell's PATH after `git clone` and `make demo`: the system's, no venv
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"


def next_steps(out: str) -> list[str]:
    """The command lines printed under 'Query it yourself:'."""
    tail = out.split("Query it yourself:\n", 1)[1]
    lines = []
    for line in tail.splitlines():
        if not line.startswith("  "):
            break
        lines.append(line.strip())
    return lines


@pytest.fixture(params=["demo", "my demo"])  # the second: a folder an operator may give --dir
def summary(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, Path]:
    root = tmp_path / request.param
    root.mkdir(mode=0o700)
    ws = create(root)
    try:
        out = io.StringIO()
        print_summary(ws, DemoResult(True, "settled"), out)
    finally:
        ws.close()
    return out.getvalue(), root


def test_no_jupcron_is_on_the_bare_path() -> None:
    """The premise of the tests below: the bare PATH finds no jupcron at all."""
    assert shutil.which("jupcron", path=BARE_PATH) is None


def test_the_printed_jupcron_commands_run_in_a_shell_without_the_venv(
    summary: tuple[str, Path],
) -> None:
    out, root = summary
    commands = [c for c in next_steps(out) if not c.startswith("sqlite3 ")]
    assert len(commands) == 2, out  # audit and report
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG", "VIRTUAL_ENV")}
    env["PATH"] = BARE_PATH
    for command in commands:
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              env=env, cwd=root, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.strip(), command


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="no sqlite3 shell on this machine")
def test_the_printed_sql_lines_run_as_printed(
    summary: tuple[str, Path],
) -> None:
    out, root = summary
    lines = [c for c in next_steps(out) if c.startswith("sqlite3 ")]
    assert len(lines) == 3, out
    for line in lines:
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True,
                              cwd="/", timeout=30, check=False)  # fmt: skip
        assert done.returncode == 0, (line, done.stderr)
        assert done.stderr == "", line
    assert not (root.parent / "my").exists()  # no database made from half a path
