"""What one request may cost the daemon's listener (daemon/listen/server.py), over
loopback HTTP with the real page behind a token, on a real SQLite file.

The listener lives in the process that signs. Before this review a request's
headers were read up to http.server's own limits (100 lines of 64 KiB: 6.5 MB a
connection) before the token was even looked at, and a client sending one byte
every 29 s kept them for ever: 128 connections from four loopback addresses held
~800 MB of the daemon's memory. A body the listener did not read (``GET
/healthz`` or a refused ``POST`` with a ``Content-Length``) was taken for the
next request on the same connection: one request, two answers (behind a reverse
proxy that reuses its connections, a desync of whose answer goes to whom).
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator

import pytest

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from jupcron.web.auth import Token
from tests.integration.test_web_api import live

TOKEN = "review20f-token-0123456789abcdef"
IDLE = 1.0  # seconds: the listener's idle timeout in these tests


def _page(sqlite_url: str, idle: float = 30.0) -> Iterator[Listener]:
    engine = open_reader(sqlite_url)
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity(), token=Token(TOKEN))
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen",
                            idle_timeout=idle)  # fmt: skip
    yield server
    server.stop()
    engine.dispose()


@pytest.fixture
def site(sqlite_url: str) -> Iterator[Listener]:
    yield from _page(sqlite_url)


@pytest.fixture
def quick_site(sqlite_url: str) -> Iterator[Listener]:
    yield from _page(sqlite_url, IDLE)


@pytest.fixture
def metrics_only() -> Iterator[Listener]:
    server = start_listener(Metrics(), "127.0.0.1:0")
    yield server
    server.stop()


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (or 5 s of silence)."""
    return _answer(sock)[0]


def _answer(sock: socket.socket) -> tuple[bytes, bool]:
    """What the server sent, and whether it closed (or reset) the connection within
    5 s of silence."""
    sock.settimeout(5)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        return data, False
    except ConnectionResetError:
        pass  # closed with our bytes still unread: a reset, maybe before its answer
    return data, True


def _status_lines(data: bytes) -> list[str]:
    """The status line of every answer in `data` (a body need not end with a newline)."""
    return re.findall(r"HTTP/1\.[01] \d{3} [^\r\n]*", data.decode("latin-1"))


def test_a_head_past_its_bound_is_refused_before_the_client_ends_it(site: Listener) -> None:
    """An unauthenticated client sends header after header and never the blank line:
    the listener answers 431 and closes once the head passes its bound, instead of
    holding up to 6.5 MB until the client finishes (it never does)."""
    line = b"X-Filler: " + b"a" * 60_000 + b"\r\n"  # under http.server's 64 KiB a line
    with socket.create_connection((site.host, site.port), timeout=10) as sock:
        sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        stopped = False
        try:
            for _ in range(90):  # 5.4 MB: under http.server's 100 lines, far past any sane head
                sock.sendall(line)
        except OSError:
            stopped = True  # closed on us mid-send: what a bounded listener does
        answer, closed = _answer(sock)
    statuses = _status_lines(answer)
    assert stopped or closed, "the listener kept reading a 5 MB head"
    assert statuses in ([], ["HTTP/1.1 431 Request Header Fields Too Large"]), statuses


def test_an_ordinary_large_cookie_header_still_gets_in(site: Listener) -> None:
    """Other sites on localhost share its cookies (a cookie ignores the port): a few
    KiB of them beside the token must not lock the operator out."""
    cookies = "; ".join(f"other{i}={'c' * 400}" for i in range(20))  # ~8 KiB
    request = (f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookies}\r\n"
               f"Authorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n")  # fmt: skip
    with socket.create_connection((site.host, site.port), timeout=10) as sock:
        sock.sendall(request.encode())
        answer = _read_all(sock)
    assert _status_lines(answer) == ["HTTP/1.1 200 OK"]


def test_a_request_trickled_a_byte_at_a_time_is_cut_off(quick_site: Listener) -> None:
    """Slowloris: one byte every 0.3 s never trips a 1 s idle timeout, and held the
    connection (and its thread and buffers) for as long as the client liked. A whole
    request must now arrive within the idle timeout of its first byte."""
    request = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 40 + b"\r\n\r\n"
    with socket.create_connection((quick_site.host, quick_site.port), timeout=10) as sock:
        closed_early = False
        for byte in request:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed_early = True
                break
            time.sleep(0.3)  # 40+ bytes: ~15 s if never cut off
            sock.setblocking(False)
            try:
                if sock.recv(1, socket.MSG_PEEK) == b"":
                    closed_early = True
                    break
            except BlockingIOError:
                pass
            except OSError:
                closed_early = True
                break
            finally:
                sock.setblocking(True)
    assert closed_early, "the listener waited for a request trickled past its idle timeout"


def test_keep_alive_requests_on_one_connection_still_work(quick_site: Listener) -> None:
    """The bound is per request: a browser's connection that asks again and again,
    each request whole, is answered every time."""
    one = f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    with socket.create_connection((quick_site.host, quick_site.port), timeout=10) as sock:
        for _ in range(3):
            sock.sendall(one.encode())
            time.sleep(0.6)  # three requests, 1.8 s in all: more than IDLE
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = _read_all(sock)
    assert _status_lines(answer) == ["HTTP/1.1 200 OK"] * 4


SMUGGLED = b"GET /nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.mark.parametrize("head", [b"GET /healthz HTTP/1.1\r\n", b"HEAD /healthz HTTP/1.1\r\n"])
def test_a_body_the_page_does_not_read_is_not_a_second_request(site: Listener, head: bytes) -> None:
    with socket.create_connection((site.host, site.port), timeout=10) as sock:
        sock.sendall(head + b"Host: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(SMUGGLED)
                     + SMUGGLED)  # fmt: skip
        answer = _read_all(sock)
    assert _status_lines(answer) == ["HTTP/1.1 200 OK"], answer


@pytest.mark.parametrize("head", [b"POST /metrics HTTP/1.1\r\n", b"GET /healthz HTTP/1.1\r\n",
                                  b"GET /metrics HTTP/1.1\r\n"])  # fmt: skip
def test_a_body_the_metrics_listener_does_not_read_is_not_a_second_request(
    metrics_only: Listener, head: bytes
) -> None:
    with socket.create_connection((metrics_only.host, metrics_only.port), timeout=10) as sock:
        sock.sendall(head + b"Host: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(SMUGGLED)
                     + SMUGGLED)  # fmt: skip
        answer = _read_all(sock)
    assert len(_status_lines(answer)) == 1, answer
