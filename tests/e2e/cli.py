"""Run the real `jupcron` command in a process of its own (forked from a server that
has imported it once: tests/support/clifork.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping

from tests.support import clifork


def jupcron(
    *args: str,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    full_env = {
        k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG", "JUPITER_API_KEY")
    }
    full_env.update(env or {})
    return clifork.run(args, env=full_env, input=input, timeout=timeout)
