"""``jupcron_healthy`` on /metrics says whether the daemon is healthy now, whether or not
anyone asked /healthz: the documented scrape (docs/operations.md) reads /metrics only,
and the dashboard's health panel is ``min(jupcron_healthy)``. Set only by /healthz, the
gauge read 0 (unhealthy) forever on a healthy daemon nobody probed, and 1 (healthy)
forever after one probe, whatever became of the store since."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.integration.test_web_api import live


class Health:
    ok = True

    def __call__(self) -> bool:
        return self.ok


def _healthy_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("jupcron_healthy "))


@pytest.fixture
def metrics_listener() -> Iterator[tuple[Listener, Health]]:
    health = Health()
    server = start_listener(Metrics(), "127.0.0.1:0", health)
    yield server, health
    server.stop()


@pytest.fixture
def page_listener(sqlite_url: str) -> Iterator[tuple[Listener, Health]]:
    health = Health()
    metrics = Metrics()
    engine = open_reader(sqlite_url)
    app = WebApp(engine, metrics=metrics, live=live, activity=Activity())
    server = start_listener(metrics, "127.0.0.1:0", health, app=app, key="web.listen")
    yield server, health
    server.stop()
    engine.dispose()


@pytest.mark.parametrize("served", ["metrics_listener", "page_listener"])
def test_the_scrape_alone_tells_the_health(served: str, request: pytest.FixtureRequest) -> None:
    server, health = request.getfixturevalue(served)
    first = httpx.get(server.url + "/metrics", timeout=5)
    assert _healthy_line(first.text) == "jupcron_healthy 1.0", "healthy, never probed"
    health.ok = False
    second = httpx.get(server.url + "/metrics", timeout=5)
    assert _healthy_line(second.text) == "jupcron_healthy 0.0", "the store went down"
