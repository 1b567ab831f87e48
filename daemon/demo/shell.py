"""The command lines the demo prints for the operator to paste: they must run as
printed, in the shell `make demo` was typed in.

`make demo` installs jupcron into the clone's `.venv` and does not put `.venv/bin`
on the operator's PATH, so a bare `jupcron` is 'command not found' there: the demo
names the very program it runs as, by its absolute path, unless the PATH already
finds that program as `jupcron`. Every path is quoted (a `--dir` may hold a space).
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path


def jupcron_command() -> str:
    """How to call this jupcron from the operator's shell."""
    script = Path(sys.executable).with_name("jupcron")  # the venv's console script
    if not script.is_file():
        return f"{shlex.quote(sys.executable)} -m jupcron"
    found = shutil.which("jupcron")
    if found is not None and Path(found).resolve() == script.resolve():
        return "jupcron"
    return shlex.quote(str(script))


def quoted(path: Path) -> str:
    return shlex.quote(str(path))
