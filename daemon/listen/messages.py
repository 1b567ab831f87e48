"""Requests and responses on the listener, and the headers every page answer carries.

The listener (daemon/listen/server.py) turns each HTTP request into a
`WebRequest` and writes back the `WebResponse` the app (daemon/web) returns, so
the app itself is plain functions over plain values.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

MAX_BODY = 4096  # bytes: the only body is the login form

# What a security scanner looks for. The page's script and style are files of our
# own ('self'); nothing inline, nothing from another origin; no framing.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Cache-Control", "no-store"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Permissions-Policy", "camera=(), microphone=(), geolocation=()"),
)


@dataclass(frozen=True)
class WebRequest:
    method: str
    target: str  # path and query, as sent
    headers: dict[str, str]  # names in lower case
    body: bytes = b""
    client: str = ""  # the peer's address (a reverse proxy's, behind one)

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    def query(self, name: str) -> str | None:
        values = parse_qs(urlsplit(self.target).query).get(name)
        return values[0] if values else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def via_https(self) -> bool:
        """Came through a TLS-terminating proxy, as it says (``X-Forwarded-Proto:
        https`` or ``Forwarded: proto=https``). A client that claims it only makes
        its own cookie `Secure`, so the claim needs no trust."""
        forwarded_proto = (self.header("x-forwarded-proto") or "").split(",")[0]
        if forwarded_proto.strip().lower() == "https":
            return True
        first = (self.header("forwarded") or "").split(",")[0]
        pairs = (part.strip().partition("=") for part in first.split(";"))
        return any(k.lower() == "proto" and v.strip('"').lower() == "https" for k, _, v in pairs)

    def cookie(self, name: str) -> str | None:
        for part in (self.header("cookie") or "").split(";"):
            key, sep, value = part.strip().partition("=")
            if sep and key == name:
                return value
        return None


@dataclass(frozen=True)
class WebResponse:
    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = field(default=())

    def all_headers(self) -> list[tuple[str, str]]:
        """The answer's own headers, then the security headers (never twice)."""
        own = {name.lower() for name, _ in self.headers}
        return [*self.headers, *(h for h in SECURITY_HEADERS if h[0].lower() not in own)]


def host_is_local(host_header: str | None) -> bool:
    """``localhost`` or an IP literal (with or without a port). A name that only
    resolves here (DNS rebinding) is not: another site's script could read the page
    through it."""
    if not host_header:
        return False
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else ""
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    if host == "localhost":
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
