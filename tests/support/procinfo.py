"""``python -m tests.support.procinfo``: prints what a process was given (for
tests/unit/test_clifork.py), then exits with the status named in $PROCINFO_EXIT."""

from __future__ import annotations

import json
import os
import sys

mask = os.umask(0)
os.umask(mask)
print(
    json.dumps(
        {
            "argv": sys.argv[1:],
            "cwd": os.getcwd(),
            "umask": mask,
            "env": os.environ.get("PROCINFO"),
            "stdin": sys.stdin.read(),
            "own_group": os.getpgid(0) == os.getpid(),
        }
    )
)
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("PROCINFO_EXIT", "0")))
