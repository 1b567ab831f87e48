"""A connection's input for the listener (`jupcron.listen.server`), one request at a
time within bounds, so that a request costs little before anyone looks at its token."""

from __future__ import annotations

import http.client
import io
import socket
import time

# bytes of one request's line and headers: http.server alone reads 100 lines of 64 KiB
# (6.5 MB a connection, 800 MB over the listener's connections) before the token is looked at; a
# browser sends a few KiB (cookies of other pages on localhost too: a cookie ignores ports)
MAX_HEAD = 32 * 1024


class RequestReader:
    """A connection's input, one request at a time within bounds: the request's line
    and headers at most `MAX_HEAD` bytes (past them `http.client.LineTooLong`, which
    http.server answers ``431``), and the whole request (line, headers, body) within
    `timeout` seconds of its first byte: a client that sends a byte every 29 s never
    trips an idle timeout, and held its thread and buffers for as long as it liked.
    Every read is what is buffered or one ``recv`` with what is left of that time."""

    def __init__(self, inner: io.BufferedReader, sock: socket.socket, timeout: float) -> None:
        self._inner, self._sock, self._timeout = inner, sock, timeout
        self._head_left: int | None = MAX_HEAD  # None: the headers are read
        self._deadline: float | None = None  # set by the request's first byte

    def next_request(self) -> None:
        """Between two requests: a new head, and the idle timeout until its first byte."""
        self._head_left, self._deadline = MAX_HEAD, None

    def head_read(self) -> None:
        """The headers are in: what follows is the body (bounded by `MAX_BODY`)."""
        self._head_left = None

    def _chunk(self) -> bytes:
        if self._deadline is None:
            wait = self._timeout
        else:
            wait = min(self._timeout, self._deadline - time.monotonic())
            if wait <= 0:
                raise TimeoutError(f"a request took more than {self._timeout:g} s")
        self._sock.settimeout(wait)
        data = self._inner.peek(1)
        if data and self._deadline is None:
            self._deadline = time.monotonic() + self._timeout
        return data

    def _take(self, count: int) -> bytes:
        if self._head_left is not None:
            self._head_left -= count
            if self._head_left < 0:
                raise http.client.LineTooLong(f"a request head over {MAX_HEAD} bytes")
        return self._inner.read(count)

    def readline(self, limit: int = -1) -> bytes:
        line = b""
        while limit < 0 or len(line) < limit:
            chunk = self._chunk()
            if not chunk:
                break
            want = len(chunk) if limit < 0 else min(len(chunk), limit - len(line))
            end = chunk.find(b"\n", 0, want)
            line += self._take(want if end < 0 else end + 1)
            if end >= 0:
                break
        return line

    def read(self, size: int = -1) -> bytes:
        data = b""
        while size < 0 or len(data) < size:
            chunk = self._chunk()
            if not chunk:
                break
            data += self._take(len(chunk) if size < 0 else min(len(chunk), size - len(data)))
        return data

    def close(self) -> None:
        self._inner.close()
