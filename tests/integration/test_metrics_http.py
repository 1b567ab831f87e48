"""The metrics listener over loopback HTTP: /metrics after runs, /healthz 200 and 503."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from daemon.errors import ConfigError
from daemon.service.metrics import Metrics, MetricsServer, serve_metrics


class Health:
    ok = True

    def __call__(self) -> bool:
        return self.ok


@pytest.fixture
def health() -> Health:
    return Health()


@pytest.fixture
def served(health: Health) -> Iterator[tuple[Metrics, MetricsServer]]:
    metrics = Metrics()
    server = serve_metrics(metrics, "127.0.0.1:0", health)
    yield metrics, server
    server.stop()


def test_scrape_after_runs_shows_counters_moved(served: tuple[Metrics, MetricsServer]) -> None:
    metrics, server = served
    line = 'jupcron_runs_total{kind="recurring_time",status="confirmed"}'
    before = httpx.get(server.url + "/metrics", timeout=5)
    assert before.status_code == 200
    assert line not in before.text
    for _ in range(3):
        metrics.record_run("recurring_time", "confirmed")
    metrics.record_run("recurring_time", "failed")
    metrics.set_plans(2)
    after = httpx.get(server.url + "/metrics", timeout=5)
    assert after.headers["content-type"].startswith("text/plain")
    assert f"{line} 3.0" in after.text
    assert 'jupcron_runs_total{kind="recurring_time",status="failed"} 1.0' in after.text
    assert "jupcron_plans 2.0" in after.text


def test_healthz_follows_the_health_callback(
    served: tuple[Metrics, MetricsServer], health: Health
) -> None:
    metrics, server = served
    ok = httpx.get(server.url + "/healthz", timeout=5)
    assert (ok.status_code, ok.text) == (200, "ok\n")
    health.ok = False
    bad = httpx.get(server.url + "/healthz", timeout=5)
    assert bad.status_code == 503
    assert metrics.registry.get_sample_value("jupcron_healthy") == 0


def test_healthz_is_503_when_the_check_raises() -> None:
    def broken() -> bool:
        raise RuntimeError("store down")

    server = serve_metrics(Metrics(), "127.0.0.1:0", broken)
    try:
        assert httpx.get(server.url + "/healthz", timeout=5).status_code == 503
    finally:
        server.stop()


def test_unknown_path_is_404(served: tuple[Metrics, MetricsServer]) -> None:
    _, server = served
    assert httpx.get(server.url + "/", timeout=5).status_code == 404


def test_port_in_use_is_a_clear_config_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match="cannot listen"):
            serve_metrics(Metrics(), f"127.0.0.1:{port}")


def test_stop_closes_the_port(served: tuple[Metrics, MetricsServer]) -> None:
    _, server = served
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/metrics", timeout=2)
