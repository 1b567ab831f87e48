"""The daemon's one HTTP listener: /metrics, /healthz and the status page.

`start_listener` starts a small threaded HTTP listener (loopback by default) with:

* ``GET /metrics`` — the registry in the Prometheus text format;
* ``GET /healthz`` — 200 ``ok`` when ``health()`` is true, else 503.

Given an ``app`` (the status page of daemon/web, on ``web.listen``), every other
request goes to it as a `WebRequest`, ``/metrics`` too (so a token guards it
there), and its `WebResponse` is written back. Every answer, http.server's own
refusals too, carries the security headers (daemon/listen/messages.py).

A connection holds a thread: `MAX_PER_CLIENT` from one address and `MAX_CONNECTIONS`
in all (more are answered ``503`` at once), each closed after `IDLE_TIMEOUT` without
a byte. A request costs little before anyone looks at its token (`RequestReader`):
its line and headers at most `MAX_HEAD` bytes (``431`` past them), the whole of it
within `IDLE_TIMEOUT` of its first byte, and a body nobody read closes the connection
(else its bytes would be the next request). Everything is synchronous with threads,
like the rest of the daemon.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from jupcron.errors import ConfigError
from jupcron.listen.messages import (
    MAX_BODY,
    SECURITY_HEADERS,
    WebRequest,
    WebResponse,
    host_is_local,
)
from jupcron.listen.metrics import Metrics
from jupcron.listen.reader import RequestReader
from jupcron.urls import is_loopback_host

log = structlog.get_logger(__name__)

IDLE_TIMEOUT = 30.0  # seconds a connection may wait for its next byte before it closes
# connections open at once (each holds a thread): in all, and from one address, so a slow
# client (slowloris) can neither grow the daemon's threads nor shut out another address
MAX_CONNECTIONS = 128
MAX_PER_CLIENT = 32
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: 5\r\nRetry-After: 5\r\nConnection: close\r\n\r\nbusy\n")  # fmt: skip
TEXT = "text/plain; charset=utf-8"

DEFAULT_LISTEN = "127.0.0.1:9464"


App = Callable[[WebRequest], WebResponse]


def parse_listen(listen: str, key: str = "metrics.listen") -> tuple[str, int]:
    """``"127.0.0.1:9464"``, ``"[::1]:9464"`` or ``":9464"`` (loopback) -> (host, port)."""
    text = listen.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        raise ConfigError(f"{key} {listen!r}: expected HOST:PORT, e.g. {DEFAULT_LISTEN}")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(f"{key} {listen!r}: the port must be a number") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"{key} {listen!r}: the port must be 0-65535")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ConfigError(
                f"{key} {listen!r}: the host must be an IP address or localhost"
            ) from None
    return host, port


def same_address(first: str, second: str) -> bool:
    """Two listen settings that name one address (``:9464``, ``127.0.0.1:9464`` and
    ``localhost:9464`` do): one listener serves both, a second could not bind. A setting
    that does not parse is only itself (its listener's start says what is wrong)."""
    try:
        return _address(first) == _address(second)
    except ConfigError:
        return first == second


def _address(listen: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    host, port = parse_listen(listen)
    return ipaddress.ip_address("127.0.0.1" if host == "localhost" else host), port


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        metrics: Metrics,
        health: Callable[[], bool],
        app: App | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ):
        self.idle_timeout = idle_timeout
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.metrics = metrics
        self.health = health
        self.app = app
        # ``jupcron_healthy`` is the check itself, asked at each scrape: a scrape reads
        # /metrics alone (docs/operations.md), never /healthz
        metrics.up.set_function(lambda: 1.0 if _healthy(health) else 0.0)
        # bound to loopback: only a Host naming this machine by IP or localhost (a name that
        # only resolves here is DNS rebinding); another address is scraped by its name
        self.local_only = is_loopback_host(address[0])
        self._open: dict[str, int] = {}  # connections being served, per client address
        self._sockets: set[socket.socket] = set()  # and their sockets, ended by `stop`
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        """A thread for the connection, unless there are too many: then ``503`` at once."""
        client = str(client_address[0])
        with self._open_lock:
            mine = self._open.get(client, 0)
            full = mine >= MAX_PER_CLIENT or sum(self._open.values()) >= MAX_CONNECTIONS
            if not full:
                self._open[client] = mine + 1
                if isinstance(request, socket.socket):
                    self._sockets.add(request)
        if full:
            if isinstance(request, socket.socket):
                with contextlib.suppress(OSError):
                    request.setblocking(False)
                    request.send(BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release(client, request)
            raise

    def process_request_thread(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release(str(client_address[0]), request)

    def end_connections(self) -> None:
        """At stop: every connection still open ends now. A browser tab polling on a
        keep-alive connection never idles out, and its thread (a daemon thread, which
        `server_close` does not wait for) went on answering for a stopped daemon."""
        with self._open_lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        """A connection that failed (mostly a client that hung up): one log line, not
        socketserver's traceback on stderr."""
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            log.debug("listener_connection_closed", error=type(error).__name__)
        else:
            log.error("listener_connection_failed", error=repr(error))

    def _release(self, client: str, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        with self._open_lock:
            if isinstance(request, socket.socket):
                self._sockets.discard(request)
            left = self._open.get(client, 1) - 1
            if left > 0:
                self._open[client] = left
            else:
                self._open.pop(client, None)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.0"  # a refused request line still gets headers
    server_version, sys_version = "jupcron", ""  # not the Python it runs on

    rfile: RequestReader  # type: ignore[assignment]
    _body_unread = False  # the request came with a body nobody has read
    _length = 0  # the request's Content-Length (`_content_length`)

    def handle_one_request(self) -> None:
        self.rfile.next_request()
        self._body_unread = False
        try:
            super().handle_one_request()
        except http.client.LineTooLong:  # the request line alone is past MAX_HEAD
            self.requestline, self.request_version, self.command = "", "HTTP/1.0", ""
            self.send_error(414)

    def parse_request(self) -> bool:
        """The request line and headers; a body in chunks is refused (``501``, closed):
        read as it comes, its bytes would be taken for the next request. So is (``400``)
        a length a proxy in front could read otherwise (`_content_length`)."""
        if not super().parse_request():
            return False
        self.rfile.head_read()
        if "Transfer-Encoding" in self.headers:
            self.send_error(501)
            return False
        length = _content_length(self.headers.get_all("Content-Length") or [])
        if length is None or len(self.headers.get_all("Host") or []) > 1:
            # two Hosts (RFC 9112 section 3.2): the localhost check here reads the
            # first, the page's (its dict of the headers) the last
            self.send_error(400)
            return False
        self._length = length
        self._body_unread = length != 0
        return True

    def setup(self) -> None:
        # a connection that sends nothing for a while, or takes too long over one request,
        # is closed, not a thread held forever; a request's head is bounded
        super().setup()
        self.connection.settimeout(self.server.idle_timeout)
        self.rfile = RequestReader(self.rfile, self.connection, self.server.idle_timeout)  # type: ignore[arg-type]

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        own = path in ("/healthz", "/metrics") and (path == "/healthz" or self.server.app is None)
        if own and self.server.local_only and not host_is_local(self.headers.get("Host")):
            self._reply(403, b"this listener answers only to localhost or an IP address\n",
                        TEXT)  # fmt: skip
            return
        if path == "/healthz":
            ok = _healthy(self.server.health)
            body = b"ok\n" if ok else b"unhealthy\n"
            self._reply(200 if ok else 503, body, TEXT)
        elif self.server.app is not None:
            self._to_app()
        elif path == "/metrics":
            self._reply(200, self.server.metrics.render(), CONTENT_TYPE_LATEST)
        else:
            self._reply(404, b"not found\n", TEXT)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        if self.server.app is None:
            self._reply(405, b"read-only\n", TEXT)
        else:
            self._to_app()

    def _to_app(self) -> None:
        app = self.server.app
        assert app is not None
        length = self._length
        if length > MAX_BODY:
            self.close_connection = True
            self._reply(413, b"request body too large\n", TEXT)
            return
        body = self.rfile.read(length) if length else b""
        self._body_unread = False
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = WebRequest(self.command, self.path, headers, body, str(self.client_address[0]))
        try:
            answer = app(request)
        except Exception as exc:  # noqa: BLE001 - one bad page must not take the listener down
            log.error("web_request_failed", path=request.path, error=repr(exc))
            answer = WebResponse(500, b"internal error\n", TEXT)
        self._reply(answer.status, answer.body, answer.content_type, answer.all_headers())

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a bad request line, a method without a handler,
        a line too long): plain text with the headers of every answer, not its HTML page
        echoing the request."""
        self.close_connection = True
        text = self.responses.get(code, ("refused",))[0]
        self._reply(code, f"{text}\n".encode(), TEXT,
                    [("Connection", "close"), *SECURITY_HEADERS])  # fmt: skip

    def _reply(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        self.connection.settimeout(self.server.idle_timeout)  # the answer's own time
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        headers = list(SECURITY_HEADERS if headers is None else headers)
        if self._body_unread and not self.close_connection:
            # its bytes would be read as the next request: one request, two answers
            headers.append(("Connection", "close"))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: scrapes are not worth a log line each."""


def _content_length(values: list[str]) -> int | None:
    """The body's length from every ``Content-Length`` the request has (0 without one);
    None when they differ or one is not digits alone. Python's `int` reads ``+5``,
    ``-0`` and ``5_0``, and http.server keeps the first of two: a proxy in front that
    reads another value takes the rest for this request's body, where the listener
    answered it as a request of its own (request smuggling: RFC 9112 section 6.3
    says to refuse such a message, 400, and close). Identical ones (``5, 5`` as well)
    are one length (RFC 9110 section 8.6)."""
    found = {part.strip() for value in values for part in value.split(",")}
    if not found:
        return 0
    if len(found) != 1:
        return None
    (only,) = found
    if not (only.isascii() and only.isdigit()):
        return None
    return int(only) if len(only) <= 18 else 10**18  # past any bound; `int` refuses 4,301 digits


def _healthy(health: Callable[[], bool]) -> bool:
    try:
        return bool(health())
    except Exception as exc:  # noqa: BLE001 - a failing check is an unhealthy answer
        log.warning("health_check_failed", error=repr(exc))
        return False


@dataclass
class Listener:
    """A running listener; `stop` shuts it down, ends the connections it holds open and
    joins its thread."""

    host: str
    port: int
    _server: _Server
    _thread: threading.Thread

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._server.end_connections()
        self._thread.join(timeout=5)


def start_listener(
    metrics: Metrics,
    listen: str = DEFAULT_LISTEN,
    health: Callable[[], bool] = lambda: True,
    app: App | None = None,
    key: str = "metrics.listen",
    idle_timeout: float = IDLE_TIMEOUT,
) -> Listener:
    """Start the listener in a background thread (port 0 picks a free port); with
    `app`, the status page too (`key` names the config key in errors and the log)."""
    host, port = parse_listen(listen, key)
    try:
        server = _Server((host, port), metrics, health, app, idle_timeout)
    except OSError as exc:
        raise ConfigError(f"{key} {listen!r}: cannot listen: {exc.strerror}") from None
    bound_port = int(server.server_address[1])
    name = "web" if app is not None else "metrics"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.2}, name=name, daemon=True
    )
    thread.start()
    if app is not None:
        log.info("web_listening", host=host, port=bound_port)
    else:
        log.info("metrics_listening", host=host, port=bound_port)
    return Listener(host, bound_port, server, thread)
