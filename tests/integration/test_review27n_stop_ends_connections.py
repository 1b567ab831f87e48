"""Stopping the listener ends the connections it holds open. A browser tab polls the
page every few seconds on one keep-alive connection, which never idles long enough to
time out: after `Listener.stop` (the daemon stopping, the page's engine disposed right
after) its thread went on answering, /healthz ``200 ok`` included, from a daemon that
had stopped, and it stayed alive into the interpreter's exit."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator

import pytest

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.integration.test_web_api import live
from tests.support.wait import wait_until


def _handler_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


@pytest.fixture
def page(sqlite_url: str) -> Iterator[Listener]:
    engine = open_reader(sqlite_url)
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity())
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield server
    server.stop()
    engine.dispose()


def _ask(connection: http.client.HTTPConnection, path: str) -> int:
    connection.request("GET", path, headers={"Host": "127.0.0.1"})
    answer = connection.getresponse()
    answer.read()
    return answer.status


def test_a_kept_alive_connection_is_not_served_after_stop(page: Listener) -> None:
    before = _handler_threads()
    connection = http.client.HTTPConnection(page.host, page.port, timeout=5)
    try:
        assert _ask(connection, "/api/status") == 200
        assert _handler_threads() == before + 1
        page.stop()
        try:
            status: int | None = _ask(connection, "/healthz")
        except (http.client.HTTPException, OSError):
            status = None  # the connection ended with the listener
        assert status is None, f"a stopped listener answered {status} on a kept-alive connection"
    finally:
        connection.close()
    assert wait_until(lambda: _handler_threads() == before, timeout=5), "its thread lives on"
