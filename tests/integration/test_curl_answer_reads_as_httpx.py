"""The API client over `CurlTransport` sees the same response as over httpx's own
transport, whatever the body (empty, chunked, not UTF-8); an encoded answer is
decoded alike."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import httpx
import pytest

from jupcron.api.http import SessionlessClient
from tests.integration.test_curl_transport import RawServer

BODIES = {
    "json": b'{"requestId": "r-1", "transaction": "' + b"A" * 3000 + b'"}',
    "empty": b"",
    "latin1": b'{"e": "\xe9"}',
}


@pytest.fixture
def servers() -> Iterator[list[RawServer]]:
    made: list[RawServer] = []
    yield made
    for server in made:
        server.close()


def serve(made: list[RawServer], answer: bytes) -> RawServer:
    made.append(RawServer(lambda _: answer))
    return made[-1]


def plain(body: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
    return head % len(body) + body


def chunked(body: bytes) -> bytes:
    half = len(body) // 2
    parts = [body[:half], body[half:]]
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts if p)
    return b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"


def both(url: str) -> tuple[httpx.Response, httpx.Response]:
    """The answer as the API client reads it, over libcurl and over httpx's transport."""
    ours = SessionlessClient(base_url=url, timeout=5)
    theirs = SessionlessClient(base_url=url, timeout=5, transport=httpx.HTTPTransport())
    try:
        return (ours.exchange(httpx.Request("GET", url + "/a")),
                theirs.exchange(httpx.Request("GET", url + "/a")))  # fmt: skip
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("shape", [plain, chunked])
@pytest.mark.parametrize("kind", sorted(BODIES))
def test_an_unencoded_answer_reads_as_httpx_reads_it(
    servers: list[RawServer], shape: object, kind: str
) -> None:
    body = BODIES[kind]
    server = serve(servers, shape(body))  # type: ignore[operator]
    ours, theirs = both(server.url)
    assert ours.content == theirs.content == body
    assert ours.headers.raw == theirs.headers.raw
    assert ours.text == theirs.text
    assert list(ours.iter_bytes()) == list(theirs.iter_bytes())
    assert ours.is_closed == theirs.is_closed
    assert ours.is_stream_consumed == theirs.is_stream_consumed
    assert ours.num_bytes_downloaded == theirs.num_bytes_downloaded == len(body)
    if kind == "json":
        assert ours.json() == theirs.json()


def test_an_encoded_answer_is_still_decoded(servers: list[RawServer]) -> None:
    packed = gzip.compress(BODIES["json"])
    answer = (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\ncontent-length: %d\r\n\r\n"
              % len(packed) + packed)  # fmt: skip
    server = serve(servers, answer)
    ours, theirs = both(server.url)
    assert ours.content == theirs.content == BODIES["json"]
    assert ours.num_bytes_downloaded == theirs.num_bytes_downloaded == len(packed)
