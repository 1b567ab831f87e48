"""The installed `jupcronctl` script: bad usage is one line on stderr, exit 2, no
traceback; `--help` is the usage. (What it runs, under a real systemd: tests/system.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_installed_script_says_bad_usage_without_a_traceback() -> None:
    script = Path(sys.executable).with_name("jupcronctl")
    done = subprocess.run([str(script), "run"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith("jupcronctl: jupcronctl does not run 'run'"), done.stderr
    assert "Traceback" not in done.stderr
    shown = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0
    assert shown.stdout.startswith("usage: jupcronctl [--unit UNIT] COMMAND")
