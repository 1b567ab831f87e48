"""The metrics listener over loopback HTTP: /metrics after runs, /healthz 200 and 503."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import httpx
import pytest

from jupcron.errors import ConfigError
from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener


@contextlib.contextmanager
def server_stopped(server: Listener) -> Iterator[None]:
    try:
        yield
    finally:
        server.stop()


class Health:
    ok = True

    def __call__(self) -> bool:
        return self.ok


@pytest.fixture
def health() -> Health:
    return Health()


@pytest.fixture
def served(health: Health) -> Iterator[tuple[Metrics, Listener]]:
    metrics = Metrics()
    server = start_listener(metrics, "127.0.0.1:0", health)
    yield metrics, server
    server.stop()


def test_scrape_after_runs_shows_counters_moved(served: tuple[Metrics, Listener]) -> None:
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
    served: tuple[Metrics, Listener], health: Health
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

    server = start_listener(Metrics(), "127.0.0.1:0", broken)
    try:
        assert httpx.get(server.url + "/healthz", timeout=5).status_code == 503
    finally:
        server.stop()


def test_unknown_path_is_404(served: tuple[Metrics, Listener]) -> None:
    _, server = served
    assert httpx.get(server.url + "/", timeout=5).status_code == 404


def test_port_in_use_is_a_clear_config_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match="cannot listen"):
            start_listener(Metrics(), f"127.0.0.1:{port}")


def test_stop_closes_the_port(served: tuple[Metrics, Listener]) -> None:
    _, server = served
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/metrics", timeout=2)


@pytest.mark.parametrize("path", ["/healthz", "/metrics"])
def test_on_loopback_a_host_that_is_only_a_name_is_refused(
    served: tuple[Metrics, Listener], path: str
) -> None:
    _, server = served
    for host, status in (("attacker.example", 403), ("rebind.example:9464", 403),
                         ("localhost", 200), ("127.0.0.1:9464", 200), ("[::1]", 200)):  # fmt: skip
        answer = httpx.get(server.url + path, headers={"host": host}, timeout=5)
        assert answer.status_code == status, (host, answer.text)


def test_an_idle_connection_is_closed() -> None:
    server = start_listener(Metrics(), "127.0.0.1:0", idle_timeout=0.5)
    with (
        server_stopped(server),
        socket.create_connection((server.host, server.port), timeout=5) as sock,
    ):
        sock.sendall(b"GET /metr")  # a request that never finishes
        sock.settimeout(5)
        assert sock.recv(1024) == b""  # the server hung up instead of holding a thread
