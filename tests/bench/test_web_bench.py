"""The status page with 10,000 plans: how long the page and its JSON twins take
(figures only, never asserted: `make bench`). The page is served as the daemon
serves it (the same app, listener and read-only engine) over loopback HTTP.

Twice: with no run yet, then with ten finished runs a plan (100,000 runs, as in
test_status_bench), names ending in ``_runs``."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import httpx

from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.bench.conftest import Figures
from tests.bench.harness import Bench, add_runs, daily_plans
from tests.bench.test_bench import FOOTPRINT_PLANS

TIMES = 5


def _live() -> LiveState:
    return LiveState(node="bench:1", rate_limit=1.0, wallet="WALLET")


def _seconds(client: httpx.Client, path: str) -> tuple[float, float, int]:
    """(first, median of the next TIMES, bytes) for one path."""
    took = []
    size = 0
    for _ in range(TIMES + 1):
        started = time.perf_counter()
        answer = client.get(path)
        took.append(time.perf_counter() - started)
        assert answer.status_code == 200, answer.text[:500]
        size = len(answer.content)
    return took[0], statistics.median(took[1:]), size


def test_status_page_with_10000_plans(
    backend_url: tuple[str, str], tmp_path: Path, figures: Figures
) -> None:
    backend, url = backend_url
    bench = Bench(tmp_path / "jc", url, "http://127.0.0.1:9")
    bench.apply(daily_plans(FOOTPRINT_PLANS))
    engine = open_reader(url)
    app = WebApp(engine, metrics=Metrics(), live=_live, activity=Activity())
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            _measure(client, backend, figures, "")
            add_runs(url)
            _measure(client, backend, figures, "_runs")
    finally:
        server.stop()
        engine.dispose()


def _measure(client: httpx.Client, backend: str, figures: Figures, suffix: str) -> None:
    for name, path in (("web_page", "/"), ("web_api_plans", "/api/plans"),
                       ("web_api_status", "/api/status"),
                       ("web_api_runs", "/api/runs")):  # fmt: skip
        first, median, size = _seconds(client, path)
        figures.put(backend, f"{name}{suffix}_first_s", round(first, 3))
        figures.put(backend, f"{name}{suffix}_s", round(median, 3))
        figures.put(backend, f"{name}{suffix}_kb", round(size / 1024, 1))
