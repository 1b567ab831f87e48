"""Ctrl-C in the first second of a `jupcron` command, while it still imports its
command line (click, pydantic, SQLAlchemy: about a second on a 2-core machine),
printed Python's traceback of an import; after it, the command's own handling says
``interrupted`` with status 130. Now both are the same.

The real `jupcron` script of the venv and `python -m jupcron`, each interrupted at
several moments after click is imported, the command line's first import of a
library: Python's own start (its `site` module), the package's first lines and the
entry point's first instruction come before any code that could answer a signal (on a
loaded machine, a moment counted from the process's start fell in `site`, and one
right after the entry point's import at its first line). The moments are read from the
imports as Python reports them (PYTHONPROFILEIMPORTTIME). The command is a `jupcron status` on a
PostgreSQL address that takes the connection and never answers, so a Ctrl-C that
comes after the imports still finds the command running (its connect waits 10 s).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent
STARTS = {"script": [str(VENV_BIN / "jupcron")], "module": [sys.executable, "-m", "jupcron"]}
MOMENTS = (0.0, 0.1, 0.3, 0.6)  # seconds after click is imported; the rest take ~1 s
CLICK = re.compile(r"^import time:.*\|\s*click$")  # its line: click is imported


@pytest.fixture
def silent_config(tmp_path: Path) -> Iterator[Path]:
    with socket.socket() as sock:  # the kernel completes connections; nobody reads
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        url = f"postgresql+psycopg://jupcron:pw@127.0.0.1:{sock.getsockname()[1]}/jupcron"
        config = tmp_path / "jupcron.yaml"
        config.write_text(f'database:\n  url: "{url}"\n')
        yield config


@pytest.mark.parametrize("start", sorted(STARTS))
def test_ctrl_c_while_the_command_starts_is_one_line_and_130(
    silent_config: Path, start: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG", "JUPITER_API_KEY")}
    env["PYTHONPROFILEIMPORTTIME"] = "1"  # a line on stderr as each import ends
    seen = []
    for moment in MOMENTS:
        proc = subprocess.Popen([*STARTS[start], "--config", str(silent_config), "status"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)  # fmt: skip
        assert proc.stderr is not None
        early = []
        for line in proc.stderr:  # up to click's line
            early.append(line)
            if CLICK.match(line.rstrip()):
                break
        else:
            raise AssertionError(f"no import of click: {''.join(early)[-2000:]}")
        time.sleep(moment)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        said = "".join(
            x for x in [*early, *err.splitlines(True)] if not x.startswith("import time:")
        )
        seen.append((moment, proc.returncode, said))
    # under `python -m`, CPython ends the process by SIGINT itself once a KeyboardInterrupt
    # left code it ran from a string (a dataclass's generated __init__, say), even one
    # caught later: the status a shell shows is 130 all the same (128 + SIGINT)
    ended = {130, -signal.SIGINT} if start == "module" else {130}
    for moment, code, err in seen:
        assert "Traceback" not in err, (moment, err)
        assert err == "interrupted\n", (moment, code, err)
        assert code in ended, (moment, code, err)
