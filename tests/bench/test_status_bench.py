"""`jupcron status` with 10,000 plans and 10 runs each: how long the command takes,
as an operator runs it (a subprocess, both formats). Figures only: `make bench`."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import text

from daemon.store.engine import make_engine
from tests.bench.conftest import Figures
from tests.bench.harness import Bench, daily_plans
from tests.bench.test_bench import FOOTPRINT_PLANS

RUNS_PER_PLAN = 10


def _add_runs(url: str) -> None:
    """Ten finished runs a plan, written straight into the store (the runner's own
    speed is test_bench's subject, not this one's)."""
    engine = make_engine(url)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        with engine.begin() as conn:
            ids = [i for (i,) in conn.execute(text("SELECT id FROM plans"))]
            rows = [
                {"p": pid, "s": start + timedelta(days=n), "st": "succeeded" if n % 3 else "failed",
                 "t": start}
                for pid in ids for n in range(RUNS_PER_PLAN)
            ]  # fmt: skip
            conn.execute(
                text(
                    "INSERT INTO runs (plan_id, plan_version, scheduled_for, status, trigger, "
                    "attempts, created_at, updated_at) VALUES (:p, 1, :s, :st, 'schedule', 1, "
                    ":t, :t)"
                ),
                rows,
            )
    finally:
        engine.dispose()


def test_status_with_10000_plans(
    backend_url: tuple[str, str], tmp_path: Path, figures: Figures
) -> None:
    backend, url = backend_url
    bench = Bench(tmp_path / "jc", url, "http://127.0.0.1:9")
    bench.apply(daily_plans(FOOTPRINT_PLANS))
    _add_runs(url)
    for fmt in ("json", "table"):
        started = time.perf_counter()
        done = bench.jupcron("status", "--format", fmt)
        took = time.perf_counter() - started
        assert done.returncode == 0, done.stderr[-2000:]
        figures.put(backend, f"status_{fmt}_s", round(took, 3))
