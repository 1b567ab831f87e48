"""`CurlTransport` (libcurl under httpx, `jupcron.api.curl`) against real servers on
loopback: the bytes it sends and the answer it gives are those of httpx's own
transport for the same request and the same bytes back; each way an exchange can
fail is the httpx exception httpx's transport raises; TLS is verified; the
environment's proxy is not used."""

from __future__ import annotations

import gzip
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from jupcron.api.curl import CurlTransport, ca_bundle
from jupcron.api.http import RequestBuilder, SessionlessClient
from tests.fixtures.receivers import free_port

TLS = Path(__file__).parents[1] / "fixtures" / "tls"
BODY = b'{"transaction": "' + b"A" * 1500 + b'", "requestId": "r-1"}'  # over 1 KiB
ANSWER = (
    b"HTTP/1.1 201 Created Here\r\ncontent-type: application/json\r\nset-cookie: a=1\r\n"
    b'set-cookie: b=2\r\nx-ratelimit-remaining: 7\r\ncontent-length: 11\r\n\r\n{"ok": 1}\r\n'
)
# what a server does with one request: its raw bytes in, the bytes to send back
# (None: close the connection without answering; b"": never answer)
Reply = Callable[[bytes], bytes | None]


class RawServer:
    """HTTP/1.1 on loopback, byte for byte: keeps every request as received (head
    and body) and the connections it accepted; answers each with `reply`."""

    def __init__(self, reply: Reply, tls: ssl.SSLContext | None = None) -> None:
        self.reply = reply
        self.close_after = False  # close each connection once it has answered
        self.requests: list[bytes] = []
        self.connections = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._tls = tls
        self._stop = threading.Event()
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True)
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, rest = buf.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)  # fmt: skip
                while len(rest) < length:
                    rest += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + rest[:length])
                buf = rest[length:]
                answer = self.reply(self.requests[-1])
                if answer is None:
                    return
                if not answer:
                    self._stop.wait(30)
                    return
                conn.sendall(answer)
                if self.close_after:
                    return
        except (OSError, ssl.SSLError):
            return
        finally:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._sock.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def make(reply: Reply = lambda _: ANSWER, tls: ssl.SSLContext | None = None) -> RawServer:
        servers.append(RawServer(reply, tls))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def exchange(transport: httpx.BaseTransport, request: httpx.Request) -> httpx.Response:
    request.extensions["timeout"] = httpx.Timeout(5, connect=2).as_dict()
    response = transport.handle_request(request)
    response.read()
    return response


def api_requests(url: str) -> list[httpx.Request]:
    """The two shapes the daemon sends, built as the API transport builds them."""
    build = RequestBuilder(url, {**httpx.Client().headers, "x-api-key": "k"})
    return [build("POST", "/swap/v2/execute", BODY, None),
            build("GET", "/swap/v2/order", None, {"inputMint": "So1", "amount": "10"})]  # fmt: skip


def without_connection(request: bytes) -> bytes:
    head, _, body = request.partition(b"\r\n\r\n")
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def test_the_bytes_sent_are_those_httpx_sends(serve: Callable[..., RawServer]) -> None:
    ours, theirs = serve(), serve()
    curl, h11 = CurlTransport(), httpx.HTTPTransport()
    for request in api_requests(ours.url):
        exchange(curl, request)
    for request in api_requests(theirs.url):
        exchange(h11, request)
    curl.close()
    h11.close()
    assert len(ours.requests) == 2
    port = str(ours.port).encode()
    theirs_here = [r.replace(str(theirs.port).encode(), port) for r in theirs.requests]
    # the same request line, headers in the same order and body; libcurl writes the
    # Connection header itself, last (the same value)
    assert [without_connection(r) for r in ours.requests] == [
        without_connection(r) for r in theirs_here
    ]
    for sent in ours.requests:
        assert sent.split(b"\r\n\r\n")[0].endswith(b"\r\nConnection: keep-alive")
    assert b"Expect" not in ours.requests[0]  # no 100-continue for a body over 1 KiB
    assert ours.requests[0].endswith(BODY)


def test_libcurls_own_headers_stay_out(serve: Callable[..., RawServer]) -> None:
    server = serve()
    curl = CurlTransport()
    exchange(curl, httpx.Request("POST", server.url + "/x", headers=[], content=b"abc"))
    curl.close()
    head = server.requests[0].split(b"\r\n\r\n")[0].lower()
    assert b"accept:" not in head
    assert b"content-type:" not in head  # not libcurl's form type
    assert b"user-agent:" not in head
    assert server.requests[0].endswith(b"\r\n\r\nabc")


def test_the_answer_is_the_one_httpx_reads(serve: Callable[..., RawServer]) -> None:
    server = serve()
    curl, h11 = CurlTransport(), httpx.HTTPTransport()
    try:
        ours = exchange(curl, httpx.Request("GET", server.url + "/a"))
        theirs = exchange(h11, httpx.Request("GET", server.url + "/a"))
    finally:
        curl.close()
        h11.close()
    assert (ours.status_code, ours.reason_phrase, ours.http_version) == (
        201,
        "Created Here",
        "HTTP/1.1",
    )
    assert ours.headers.raw == theirs.headers.raw  # order and repeats kept
    assert ours.headers.get_list("set-cookie") == ["a=1", "b=2"]
    assert ours.content == theirs.content == b'{"ok": 1}\r\n'
    assert ours.json() == {"ok": 1}


def test_a_compressed_answer_is_decoded_as_httpx_decodes_it(
    serve: Callable[..., RawServer],
) -> None:
    packed = gzip.compress(b'{"outAmount": "42"}')
    server = serve(lambda _: b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n"
                   % len(packed) + packed)  # fmt: skip
    curl = CurlTransport()
    response = exchange(curl, httpx.Request("GET", server.url + "/a"))
    curl.close()
    assert response.json() == {"outAmount": "42"}


def test_a_chunked_compressed_answer_is_read_as_httpx_reads_it(
    serve: Callable[..., RawServer],
) -> None:
    packed = gzip.compress(b'{"requestId": "r-9", "outAmount": "42"}')
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (packed[:7], packed[7:]))
    answer = (
        b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n"
        + chunks
        + b"0\r\nx-trailer: t\r\n\r\n"
    )
    ours, theirs = serve(lambda _: answer), serve(lambda _: answer)
    curl, h11 = CurlTransport(), httpx.HTTPTransport()
    mine = exchange(curl, httpx.Request("GET", ours.url + "/a"))
    other = exchange(h11, httpx.Request("GET", theirs.url + "/a"))
    curl.close()
    h11.close()
    assert mine.json() == other.json() == {"requestId": "r-9", "outAmount": "42"}
    assert mine.headers.raw == other.headers.raw


def test_one_connection_serves_a_threads_requests(serve: Callable[..., RawServer]) -> None:
    server = serve()
    curl = CurlTransport()
    for _ in range(3):
        assert exchange(curl, httpx.Request("GET", server.url + "/a")).status_code == 201
    curl.close()
    assert server.connections == 1


def test_a_connection_the_server_closed_meanwhile_is_made_again(
    serve: Callable[..., RawServer],
) -> None:
    answer = ANSWER.replace(
        b"content-length: 11\r\n", b"connection: close\r\ncontent-length: 11\r\n"
    )
    server = serve(lambda _: answer)
    curl = CurlTransport()
    statuses = [
        exchange(curl, httpx.Request("GET", server.url + "/a")).status_code for _ in range(2)
    ]
    curl.close()
    assert statuses == [201, 201]
    assert server.connections == 2


def test_a_refused_connection_is_a_connect_error() -> None:
    curl = CurlTransport()
    request = httpx.Request("GET", f"http://127.0.0.1:{free_port()}/a")  # nothing listens
    with pytest.raises(httpx.ConnectError) as refused:
        exchange(curl, request)
    assert refused.value.request is request


def test_no_answer_in_time_is_a_read_timeout(serve: Callable[..., RawServer]) -> None:
    server = serve(lambda _: b"")  # reads the request, never answers
    curl = CurlTransport()
    request = httpx.Request("POST", server.url + "/x", content=b"{}")
    request.extensions["timeout"] = httpx.Timeout(0.3, connect=2).as_dict()
    with pytest.raises(httpx.ReadTimeout):
        curl.handle_request(request)
    assert len(server.requests) == 1  # sent once: no retry of its own


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (lambda _: None, httpx.RemoteProtocolError),  # closed without a word
        (
            lambda _: b'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"cut',
            httpx.RemoteProtocolError,
        ),
        (lambda _: b"garbage\r\n\r\n", httpx.RemoteProtocolError),
        (lambda _: b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n{}", httpx.RemoteProtocolError),
    ],
    ids=["closed", "cut-short", "not-http", "bad-length"],
)
def test_a_broken_answer_is_the_error_httpx_raises(
    serve: Callable[..., RawServer], reply: Reply, error: type[Exception]
) -> None:
    ours, theirs = serve(reply), serve(reply)
    ours.close_after = theirs.close_after = True  # a body cut short ends with the connection
    curl, h11 = CurlTransport(), httpx.HTTPTransport()
    with pytest.raises(error):
        exchange(curl, httpx.Request("GET", ours.url + "/a"))
    with pytest.raises(error):
        exchange(h11, httpx.Request("GET", theirs.url + "/a"))
    curl.close()
    h11.close()
    assert len(ours.requests) == 1


@pytest.mark.parametrize("value", ["t\r\nx-injected: 1", "t\nx-injected: 1", "t\x00"])
def test_a_header_with_a_line_break_is_refused_before_anything_is_sent(
    serve: Callable[..., RawServer], value: str
) -> None:
    server = serve()
    request = httpx.Request("GET", server.url + "/a", headers={"authorization": value})
    ours, theirs = CurlTransport(), httpx.HTTPTransport()
    with pytest.raises(httpx.LocalProtocolError):
        exchange(ours, request)
    with pytest.raises(httpx.LocalProtocolError):
        exchange(theirs, request)
    ours.close()
    theirs.close()
    assert server.requests == []


def test_other_schemes_are_refused_before_anything_is_sent() -> None:
    curl = CurlTransport()
    with pytest.raises(httpx.UnsupportedProtocol):
        exchange(curl, httpx.Request("GET", "file:///etc/passwd"))


def tls_server_context() -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(TLS / "server.pem", TLS / "server.key")
    return context


def test_tls_is_verified_against_the_ca_bundle(serve: Callable[..., RawServer]) -> None:
    server = serve(tls=tls_server_context())
    trusting = CurlTransport(cafile=str(TLS / "ca.pem"))
    assert exchange(trusting, httpx.Request("GET", server.url + "/a")).status_code == 201
    trusting.close()
    default = CurlTransport()  # certifi's bundle: our test CA is not in it
    with pytest.raises(httpx.ConnectError):
        exchange(default, httpx.Request("GET", server.url + "/a"))
    default.close()
    assert len(server.requests) == 1  # nothing sent to the server it could not verify


def test_the_ca_bundle_is_httpxs_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    import certifi

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    assert ca_bundle() == (certifi.where(), None)
    monkeypatch.setenv("SSL_CERT_DIR", "/etc/ssl/certs")
    assert ca_bundle() == (None, "/etc/ssl/certs")
    monkeypatch.setenv("SSL_CERT_FILE", str(TLS / "ca.pem"))
    assert ca_bundle() == (str(TLS / "ca.pem"), None)


def test_an_environment_proxy_is_not_used(
    serve: Callable[..., RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client routes a proxy through httpx's own transport; ours goes direct."""
    for name in (
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    server = serve()
    curl = CurlTransport()
    assert exchange(curl, httpx.Request("GET", server.url + "/a")).status_code == 201
    curl.close()


def test_the_client_uses_it_per_thread_and_a_closed_one_refuses(
    serve: Callable[..., RawServer],
) -> None:
    server = serve()
    client = SessionlessClient()
    assert client.exchange(httpx.Request("GET", server.url + "/a")).status_code == 201
    (pool,) = client._pools.values()
    assert isinstance(pool, CurlTransport)
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        pool.handle_request(httpx.Request("GET", server.url + "/a"))


def test_a_request_whose_answer_was_lost_is_not_sent_again(
    serve: Callable[..., RawServer],
) -> None:
    """libcurl would send it again, on a new connection, when the kept-alive one
    closes before an answer: for an execute that is a second post nobody records."""

    def answer_once_per_connection(request: bytes) -> bytes | None:
        return ANSWER if b"/first" in request else None  # read it, then close: no answer

    ours, theirs = serve(answer_once_per_connection), serve(answer_once_per_connection)
    for server, transport in ((ours, CurlTransport()), (theirs, httpx.HTTPTransport())):
        assert exchange(transport, httpx.Request("GET", server.url + "/first")).status_code == 201
        with pytest.raises(httpx.RemoteProtocolError):
            exchange(transport, httpx.Request("POST", server.url + "/execute", content=BODY))
        transport.close()
    # the lost one went out once (libcurl has opened its new connection by then: unused)
    assert len(ours.requests) == len(theirs.requests) == 2
