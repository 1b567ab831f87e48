"""HTTP/1.1 exchanges through libcurl (pycurl): one thread's connection to the API.

httpx's own transport (httpcore over h11) parses every answer in Python while
holding the GIL: about 300 us of CPU a request, a quarter of a run's, and in a
burst every worker waits for that GIL. libcurl sends, reads and parses with the
GIL released; what is left in Python is copying the headers in and the answer
out (about 120 us). The requests and answers stay httpx's (`httpx.Request` in,
`httpx.Response` out), so everything above the transport is unchanged.

`CurlTransport` is what `jupcron.api.http.SessionlessClient` makes for each
thread when it makes its own transport (no proxy, no TLS or pool settings of the
caller's): one libcurl handle keeps the thread's connection alive, as the
thread's httpx pool did. What it does as httpx does:
- **What is sent.** The request's own headers, in order, and nothing else:
  libcurl's additions (``Accept: */*``, a form Content-Type, ``Expect:
  100-continue`` for bodies over 1 KiB) are switched off; the body as bytes.
- **What is followed.** Nothing: no redirect, no proxy from the environment (the
  client routes those through httpx's transport), ``http`` and ``https`` only.
- **One send an exchange.** libcurl sends a request again, on a new connection,
  when the kept-alive one it went out on closes before any answer; httpx does
  not. Here that second send is refused and the exchange fails as it would with
  httpx (`RemoteProtocolError`): an execute whose answer was lost is seen, and
  its repost is one more attempt in the run's record, not a hidden one.
- **TLS.** Peer and host name verified against the CA bundle httpx would load:
  ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` from the environment, else certifi's.
- **The answer.** Status, headers (of the final answer, as received) and the body
  undecoded: `httpx.Response` decodes a ``Content-Encoding`` itself.
- **Headers.** A name or value with a line break or NUL is refused before anything
  is sent (`LocalProtocolError`, as h11 refuses it): it cannot add a header.
- **Errors.** As httpx's exceptions (`httpx.TransportError`): could not connect
  (`ConnectError`, `ConnectTimeout`), no answer in time (`ReadTimeout`), the
  connection broken or the answer malformed (`RemoteProtocolError`, `ReadError`,
  `WriteError`).

Timeouts: the connect timeout bounds connecting (TLS handshake included); the
read timeout bounds the whole exchange, connect included (libcurl times a
transfer, not each read): the API answers a request in one piece, so "no answer
within the read timeout" is the limit an operator sets.
"""

from __future__ import annotations

import io
import os
from typing import Any

import certifi
import httpx
import pycurl

# libcurl's codes (curl/curl.h) as httpx's exceptions
_CONNECT = frozenset({
    pycurl.E_COULDNT_RESOLVE_HOST, pycurl.E_COULDNT_CONNECT, pycurl.E_SSL_CONNECT_ERROR,
    pycurl.E_PEER_FAILED_VERIFICATION, pycurl.E_SSL_CACERT_BADFILE, pycurl.E_SSL_CERTPROBLEM,
    pycurl.E_SSL_CIPHER, pycurl.E_SSL_ENGINE_NOTFOUND, pycurl.E_SSL_ENGINE_SETFAILED,
    pycurl.E_SSL_ISSUER_ERROR, pycurl.E_SSL_CRL_BADFILE, pycurl.E_COULDNT_RESOLVE_PROXY,
    pycurl.E_URL_MALFORMAT,
})  # fmt: skip
_WRITE = frozenset({pycurl.E_SEND_ERROR})
_READ = frozenset({pycurl.E_RECV_ERROR})
_BREAKS = (b"\r", b"\n", b"\0")
_NO_HEADERS = (b"Expect:",)  # libcurl's additions, sent only when the request has them
_ADDED = (
    (b"accept", b"Accept:"),
    (b"content-type", b"Content-Type:"),
    (b"user-agent", b"User-Agent:"),
)


def ca_bundle() -> tuple[str | None, str | None]:
    """(CA file, CA folder) as httpx chooses them for ``verify=True``."""
    if os.environ.get("SSL_CERT_FILE"):
        return os.environ["SSL_CERT_FILE"], None
    if os.environ.get("SSL_CERT_DIR"):
        return None, os.environ["SSL_CERT_DIR"]
    return certifi.where(), None


class CurlTransport(httpx.BaseTransport):
    """One thread's connection: not to be shared between threads (a libcurl handle
    is not thread-safe)."""

    def __init__(self, cafile: str | None = None, capath: str | None = None) -> None:
        if cafile is None and capath is None:
            cafile, capath = ca_bundle()
        # the options of every request (set again after each reset)
        self._fixed: tuple[tuple[int, Any], ...] = (
            (pycurl.NOSIGNAL, 1),  # timeouts without SIGALRM (threads)
            (pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS),
            (pycurl.PROXY, ""),  # none from the environment
            (pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1),
            (pycurl.SSL_VERIFYPEER, 1),
            (pycurl.SSL_VERIFYHOST, 2),
            *([(pycurl.CAINFO, cafile)] if cafile is not None else []),
            *([(pycurl.CAPATH, capath)] if capath is not None else []),
            (pycurl.PREREQFUNCTION, self._once),
        )
        self._curl = pycurl.Curl()
        self._sends = 0  # times the request under way went out

    def _once(self, *_connection: object) -> int:
        """libcurl's PREREQFUNCTION, called each time the request is about to go out:
        a second time in one exchange is libcurl sending it again on a new connection
        (a kept-alive one closed before any answer came). Refused: that attempt failed,
        as it does with httpx, and the caller decides about another, and records it."""
        self._sends += 1
        return int(pycurl.PREREQFUNC_OK if self._sends == 1 else pycurl.PREREQFUNC_ABORT)

    def _prepare(self, curl: Any, request: httpx.Request) -> None:
        curl.reset()  # options do not carry over from the last request: all set anew
        for option, value in self._fixed:
            curl.setopt(option, value)
        timeout = request.extensions.get("timeout", {})
        read, connect = timeout.get("read"), timeout.get("connect")
        if connect is not None:
            curl.setopt(pycurl.CONNECTTIMEOUT_MS, max(1, round(connect * 1000)))
        if read is not None:
            curl.setopt(pycurl.TIMEOUT_MS, max(1, round(read * 1000)))
        curl.setopt(pycurl.URL, str(request.url))
        body = request.read()
        method = request.method.upper()
        if method == "GET" and not body:
            curl.setopt(pycurl.HTTPGET, 1)
        elif method == "HEAD":
            curl.setopt(pycurl.NOBODY, 1)
        else:
            curl.setopt(pycurl.CUSTOMREQUEST, method)
            if body or method in ("POST", "PUT", "PATCH"):
                curl.setopt(pycurl.POSTFIELDSIZE, len(body))
                curl.setopt(pycurl.POSTFIELDS, body)
        raw = request.headers.raw
        names = {name.lower() for name, _ in raw}
        lines = [name + b": " + value for name, value in raw]
        sent = b"".join(lines)  # one search each (the marks are single bytes: none spans two)
        if any(mark in sent for mark in _BREAKS):
            # h11 refuses these too: a line break would start a header of its own
            raise httpx.LocalProtocolError("Illegal header value: a line break or NUL")
        lines.extend(_NO_HEADERS)
        lines.extend(off for name, off in _ADDED if name not in names)
        curl.setopt(pycurl.HTTPHEADER, lines)
        self._sends = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        curl = self._curl
        if curl is None:
            raise RuntimeError("the transport is closed")
        if request.url.scheme not in ("http", "https"):  # as httpx's transport refuses it
            raise httpx.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{request.url.scheme}://'.",
                request=request,
            )
        self._prepare(curl, request)
        heads: list[bytes] = []
        body = io.BytesIO()
        curl.setopt(pycurl.HEADERFUNCTION, heads.append)
        curl.setopt(pycurl.WRITEFUNCTION, body.write)
        try:
            curl.perform()
        except pycurl.error as exc:
            raise _error(curl, exc, request) from None
        status = curl.getinfo(pycurl.RESPONSE_CODE)
        reason, headers = _final_headers(heads)
        return httpx.Response(
            status,
            headers=headers,
            stream=httpx.ByteStream(body.getvalue()),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
            request=request,
        )

    def close(self) -> None:
        curl, self._curl = self._curl, None
        if curl is not None:
            curl.close()


def _final_headers(heads: list[bytes]) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The reason phrase and headers of the last answer libcurl read (an interim
    ``100 Continue`` comes before it), up to their blank line (a chunked body's
    trailers come after it: httpx does not make them headers)."""
    start = 0
    for index, line in enumerate(heads):
        if line.startswith(b"HTTP/"):
            start = index
    status_line = heads[start].rstrip(b"\r\n") if heads else b""
    reason = status_line.split(b" ", 2)[2] if status_line.count(b" ") >= 2 else b""
    headers = []
    for line in heads[start + 1 :]:
        if line in (b"\r\n", b"\n"):
            break
        name, sep, value = line.partition(b":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return reason, headers


def _error(curl: Any, exc: pycurl.error, request: httpx.Request) -> httpx.TransportError:
    code, message = exc.args[0], str(exc.args[1]) if len(exc.args) > 1 else ""
    if code == pycurl.E_ABORTED_BY_CALLBACK:  # not sent again (`_once`)
        return httpx.RemoteProtocolError(
            "Server disconnected without sending a response.", request=request
        )
    if code == pycurl.E_OPERATION_TIMEDOUT:
        connected = curl.getinfo(pycurl.CONNECT_TIME) > 0
        kind: type[httpx.TransportError] = httpx.ReadTimeout if connected else httpx.ConnectTimeout
    elif code in _CONNECT:
        kind = httpx.ConnectError
    elif code in _WRITE:
        kind = httpx.WriteError
    elif code in _READ:
        kind = httpx.ReadError
    else:  # nothing read, not HTTP (libcurl: "unsupported protocol"), a body cut short, …
        kind = httpx.RemoteProtocolError
    return kind(message or f"libcurl error {code}", request=request)
