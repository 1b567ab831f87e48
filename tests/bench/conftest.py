"""Benchmark fixtures: the figures collected by every benchmark, printed as one
table and written to ``bench-results.json`` when the session ends."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.bench.report import render_table

RESULTS = Path(os.environ.get("JUPCRON_BENCH_RESULTS", "bench-results.json"))


class Figures:
    """``figures.put(backend, name, value)``; one dict per backend."""

    def __init__(self) -> None:
        self.by_backend: dict[str, dict[str, Any]] = {}

    def put(self, backend: str, name: str, value: Any) -> None:
        self.by_backend.setdefault(backend, {})[name] = value

    def as_json(self) -> dict[str, Any]:
        return {
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {
                "cores": os.cpu_count(),
                "python": platform.python_version(),
                "system": platform.platform(),
            },
            "results": self.by_backend,
        }


@pytest.fixture(scope="session")
def figures() -> Iterator[Figures]:
    collected = Figures()
    yield collected
    if not collected.by_backend:
        return
    data = collected.as_json()
    RESULTS.write_text(json.dumps(data, indent=2, default=str) + "\n")
    print()
    print(render_table(data))
    print(f"(written to {RESULTS.resolve()})")


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(backend name, URL of an empty database)."""
    name = "sqlite_empty_url" if request.param == "sqlite" else "pg_empty_url"
    return str(request.param), str(request.getfixturevalue(name))
