"""The daemon's one listener (daemon/listen/server.py) over loopback HTTP, as the page
runs it: http.server's own refusals carry the headers every answer carries, and the
connections one address holds open are bounded (a slow client holds a thread each)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.integration.test_web_api import live

HEAD = "Host: 127.0.0.1\r\nConnection: close\r\n\r\n"


@pytest.fixture
def site(sqlite_url: str) -> Iterator[Listener]:
    engine = open_reader(sqlite_url)
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity())
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield server
    server.stop()
    engine.dispose()


def exchange(server: Listener, request: str) -> tuple[str, dict[str, str], bytes]:
    """One raw request; (status line, headers in lower case, body)."""
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(request.encode("latin-1"))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
    return status, headers, body


@pytest.mark.parametrize(("request_text", "code"), [
    (f"PUT /api/plans HTTP/1.1\r\nContent-Length: 0\r\n{HEAD}", "501"),
    (f"OPTIONS / HTTP/1.1\r\n{HEAD}", "501"),
    (f"GET / HTTP/9.9\r\n{HEAD}", "505"),
    (f"GET /{'a' * 70_000} HTTP/1.1\r\n{HEAD}", "414"),
    ("<script>alert(1)</script>\r\n\r\n", "400"),
    (f"GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n{HEAD}0\r\n\r\n", "501"),
    (f"GET /healthz HTTP/1.1\r\n{HEAD}", "200"),
])  # fmt: skip
def test_the_listeners_own_answers_carry_the_security_headers(
    site: Listener, request_text: str, code: str
) -> None:
    status, headers, body = exchange(site, request_text)
    assert status.split()[1] == code, status
    assert headers["content-type"] == "text/plain; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["server"] == "jupcron"  # not the Python version
    assert b"<" not in body


def _handler_threads() -> int:
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def test_one_address_cannot_hold_a_thread_per_connection(site: Listener) -> None:
    """A slow client (slowloris) opens connections and never finishes a request: each
    held a thread of the daemon for as long as it trickled. From one address they are
    now bounded, and a scrape from another address is still answered at once."""
    before = _handler_threads()
    held = []
    try:
        for _ in range(60):
            sock = socket.create_connection((site.host, site.port), timeout=10,
                                            source_address=("127.0.0.2", 0))  # fmt: skip
            sock.sendall(b"GET /api/status HTTP/1.1\r\n")  # and never the rest
            held.append(sock)
        time.sleep(0.5)
        assert _handler_threads() - before <= 32
        started = time.monotonic()
        assert httpx.get(site.url + "/healthz", timeout=5).status_code == 200
        assert time.monotonic() - started < 2
    finally:
        for sock in held:
            sock.close()


def test_a_client_that_hangs_up_is_no_traceback_on_stderr(
    site: Listener, capfd: pytest.CaptureFixture[str]
) -> None:
    """A browser that navigates away mid-answer: the daemon's stderr (the journal) gets
    no multi-line traceback from http.server, only the log's own lines."""
    for _ in range(5):
        sock = socket.create_connection((site.host, site.port), timeout=10)
        sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # a reset, before the answer
    time.sleep(1.0)
    assert httpx.get(site.url + "/healthz", timeout=5).status_code == 200
    assert "Traceback" not in capfd.readouterr().err
