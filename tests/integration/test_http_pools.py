"""`SessionlessClient` keeps one connection per thread (a libcurl handle each, as
each thread's own client would), and shares the one transport it was given or made
of TLS or pool settings. Real HTTP over loopback: the server sees which connection
each request came on, and when a connection closes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from jupcron.api.http import SessionlessClient
from tests.fixtures.receivers import send_json
from tests.support.wait import wait_until


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.seen: list[tuple[str, int]] = []  # (the request's thread tag, client port)
        self.closed: set[int] = set()  # client ports whose connection ended
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection serves many requests
    server: Server

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.seen.append((self.path.strip("/"), self.client_address[1]))
        send_json(self, b"{}")

    def finish(self) -> None:
        super().finish()
        with self.server.lock:
            self.server.closed.add(self.client_address[1])

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def get(client: SessionlessClient, url: str, tag: str) -> None:
    response = client.exchange(httpx.Request("GET", f"{url}/{tag}"))
    assert response.status_code == 200


def in_thread(fn: Callable[..., object], *args: object) -> None:
    thread = threading.Thread(target=fn, args=args)
    thread.start()
    thread.join()


def ports_of(server: Server, tag: str) -> set[int]:
    with server.lock:
        return {port for seen, port in server.seen if seen == tag}


def a_then_b_then_a(client: SessionlessClient, server: Server) -> tuple[set[int], set[int]]:
    """Thread "a" sends, then thread "b" while "a" is alive, then "a" again (one after
    another: one shared pool hands its idle connection on); the ports each used."""
    a_done, b_done = threading.Event(), threading.Event()

    def a() -> None:
        get(client, server.url, "a")
        a_done.set()  # its answer read: the connection is idle in its pool
        b_done.wait(5)
        get(client, server.url, "a")

    first = threading.Thread(target=a)
    first.start()
    assert a_done.wait(5)
    in_thread(get, client, server.url, "b")
    b_done.set()
    first.join()
    return ports_of(server, "a"), ports_of(server, "b")


def test_each_thread_keeps_its_own_connection(server: Server) -> None:
    client = SessionlessClient()
    try:
        a_ports, b_ports = a_then_b_then_a(client, server)
        assert len(a_ports) == 1  # its two requests on one kept-alive connection
        assert len(b_ports) == 1
        assert a_ports != b_ports
    finally:
        client.close()


def test_a_client_given_tls_or_pool_settings_keeps_one_pool(server: Server) -> None:
    """Its pools would have to be made with them: it keeps the one httpx made."""
    client = SessionlessClient(verify=False)
    try:
        a_ports, b_ports = a_then_b_then_a(client, server)
        assert len(a_ports | b_ports) == 1  # one connection, handed on
    finally:
        client.close()


def test_the_pool_of_an_ended_thread_is_closed_and_close_ends_every_pool(server: Server) -> None:
    client = SessionlessClient()
    in_thread(get, client, server.url, "a")
    (a,) = ports_of(server, "a")
    assert a not in server.closed  # kept alive after its thread ended
    in_thread(get, client, server.url, "b")  # the next pool made closes the ended one's
    assert wait_until(lambda: a in server.closed, timeout=5)
    get(client, server.url, "main")
    (b,), (main,) = ports_of(server, "b"), ports_of(server, "main")
    client.close()
    assert wait_until(lambda: {b, main} <= server.closed, timeout=5)


def test_a_transport_given_is_shared_by_every_thread() -> None:
    calls: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(threading.current_thread().name)
        return httpx.Response(200, json={})

    client = SessionlessClient(transport=httpx.MockTransport(answer))
    try:
        in_thread(get, client, "http://api.test", "a")
        get(client, "http://api.test", "main")
    finally:
        client.close()
    assert len(calls) == 2
    assert len(set(calls)) == 2
