"""``metrics.listen`` and ``web.listen`` naming the same address share one listener (the
page's, with /metrics beside it), however each is written: ``:9464`` is 127.0.0.1:9464
(README). Compared as text, the two spellings started two listeners on one port and the
daemon refused to start: "web.listen ':PORT': cannot listen: Address already in use",
its own metrics listener holding the port."""

from __future__ import annotations

import socket

import httpx
import pytest

from jupcron.config import Config
from jupcron.listen.metrics import Metrics
from jupcron.service.wiring import Wiring
from jupcron.web.serve import StatusPage
from tests.integration.test_web_api import live


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("metrics_host", "web_host"), [
    ("127.0.0.1", ""),
    ("", "127.0.0.1"),
    ("127.0.0.1", "localhost"),
    (" 127.0.0.1", "127.0.0.1"),
])  # fmt: skip
def test_the_same_address_spelt_two_ways_is_one_listener(
    sqlite_url: str, metrics_host: str, web_host: str
) -> None:
    port = _free_port()
    config = Config.model_validate({
        "database": {"url": sqlite_url},
        "metrics": {"listen": f"{metrics_host}:{port}"},
        "web": {"listen": f"{web_host}:{port}"},
    })  # fmt: skip
    wiring = Wiring(metrics=Metrics(), page=StatusPage(), transport=None)
    try:
        wiring.start_servers(config, health=lambda: True, live=live)
        assert wiring.metrics_server is None  # the page's listener serves /metrics
        assert wiring.web_server is not None
        answer = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
        assert answer.status_code == 200
        assert "jupcron_healthy" in answer.text
    finally:
        wiring.stop_servers()
