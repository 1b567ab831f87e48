"""A request with two ``Content-Length`` headers that differ was read by the first
(http.server's `headers.get`), and the bytes past it were answered as the next
request on the connection. A proxy in front that reads the other one (the last, say)
forwards them as the first request's body: one request to it, two to the daemon (the
smuggling RFC 9112 §6.3 forbids; it says to refuse such a message with 400 and close).
A value that is not digits alone (``+5``, ``5_0``: Python's `int` reads both) is
refused the same way. Over loopback, the real page behind its token."""

from __future__ import annotations

import socket

import pytest

from jupcron.listen.server import Listener
from tests.integration.test_listener_request_bounds import (
    SMUGGLED,
    _read_all,
    _status_lines,
    site,  # noqa: F401 - a fixture
)

_N = len(SMUGGLED)


@pytest.mark.parametrize(
    "lengths",
    [
        [b"0", b"%d" % _N],
        [b"%d" % _N, b"0"],
        [b"0, %d" % _N],
        [b"+0"],
        [b"0_0"],
        [b" -0"],
    ],
    ids=["first-zero", "last-zero", "list", "plus", "underscore", "minus"],
)
def test_differing_or_malformed_lengths_are_refused(
    site: Listener,  # noqa: F811
    lengths: list[bytes],
) -> None:
    head = b"POST /logout HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    head += b"".join(b"Content-Length: %s\r\n" % value for value in lengths)
    with socket.create_connection((site.host, site.port), timeout=10) as sock:
        sock.sendall(head + b"\r\n" + SMUGGLED)
        answer = _read_all(sock)
    assert _status_lines(answer) == ["HTTP/1.1 400 Bad Request"], answer


def test_the_same_length_twice_is_one_request(site: Listener) -> None:  # noqa: F811
    body = b"token=x"
    head = b"POST /logout HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    head += b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body))
    with socket.create_connection((site.host, site.port), timeout=10) as sock:
        sock.sendall(head + body)
        answer = _read_all(sock)
    assert len(_status_lines(answer)) == 1, answer
    assert b" 400 " not in answer.split(b"\r\n", 1)[0], answer


def test_a_length_of_thousands_of_digits_is_too_large_not_a_crash(
    site: Listener,  # noqa: F811
) -> None:
    head = b"POST /logout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %s\r\n\r\n" % (b"9" * 5000)
    with socket.create_connection((site.host, site.port), timeout=10) as sock:
        sock.sendall(head)
        answer = _read_all(sock)
    assert _status_lines(answer) == ["HTTP/1.1 413 Request Entity Too Large"], answer


def test_two_host_headers_are_refused(site: Listener) -> None:  # noqa: F811
    """RFC 9112 section 3.2: more than one Host is a 400. The listener's own localhost
    check read the first (`headers.get`), the page behind it the last (its dict of the
    headers): two answers to "is this addressed to localhost?" for one request."""
    head = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n"
    with socket.create_connection((site.host, site.port), timeout=10) as sock:
        sock.sendall(head)
        answer = _read_all(sock)
    assert _status_lines(answer) == ["HTTP/1.1 400 Bad Request"], answer
