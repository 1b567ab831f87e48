"""Run the real `jupcron` command as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping

JUPCRON = [sys.executable, "-m", "jupcron"]


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
    return subprocess.run(
        [*JUPCRON, *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        timeout=timeout,
        check=False,
    )
