"""The status page's JSON twins against `jupcron status --format json`."""

from __future__ import annotations

from typing import Any


def agreeing(web: Any, cli: Any, where: str = "") -> None:
    """Every field `jupcron status` has is in the twin, with the same value (the
    twin may carry more)."""
    if isinstance(cli, dict):
        assert isinstance(web, dict), where
        for key, value in cli.items():
            assert key in web, f"{where}.{key} missing from the twin"
            agreeing(web[key], value, f"{where}.{key}")
    elif isinstance(cli, list):
        assert isinstance(web, list), where
        assert len(web) == len(cli), where
        for n, (a, b) in enumerate(zip(web, cli, strict=True)):
            agreeing(a, b, f"{where}[{n}]")
    else:
        assert web == cli, where
