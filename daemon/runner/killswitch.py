"""The kill switch, as the config has it: on (``safety.kill_switch``), or a file that
exists (``safety.kill_switch_file``). A module of its own: `jupcron status` and the
heartbeat read it without importing the runner's order machinery."""

from __future__ import annotations

from jupcron.config import Config


def kill_switch(config: Config) -> str | None:
    """Why no run may be ordered now, or ``None``."""
    if config.safety.kill_switch:
        return "kill switch is on (safety.kill_switch)"
    path = config.safety.kill_switch_file
    if path is not None and path.exists():
        return f"kill switch file {path} exists"
    return None
