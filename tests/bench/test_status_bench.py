"""`jupcron status` with 10,000 plans and 10 runs each: how long the command takes,
as an operator runs it (a subprocess, both formats). Figures only: `make bench`."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.bench.conftest import Figures
from tests.bench.harness import Bench, add_runs, daily_plans
from tests.bench.test_bench import FOOTPRINT_PLANS


@pytest.mark.timeout(1800)  # at 100,000 plans (JUPCRON_BENCH_FOOTPRINT_PLANS) apply takes a while
def test_status_with_10000_plans(
    backend_url: tuple[str, str], tmp_path: Path, figures: Figures
) -> None:
    backend, url = backend_url
    bench = Bench(tmp_path / "jc", url, "http://127.0.0.1:9")
    bench.apply(daily_plans(FOOTPRINT_PLANS))
    add_runs(url)
    for fmt in ("json", "table"):
        started = time.perf_counter()
        done = bench.jupcron("status", "--format", fmt)
        took = time.perf_counter() - started
        assert done.returncode == 0, done.stderr[-2000:]
        figures.put(backend, f"status_{fmt}_s", round(took, 3))
