"""URLs from the config: what may be shown of them, and whether they may travel in clear.

An RPC URL often carries its provider's key (``?api-key=…``, or a token as a
path segment), a webhook URL carries its token in the path, a database URL may
carry a password. `mask_url` is all that logs, errors, ``repr()`` and dumps show:

* ``http(s)://``: scheme, host and port; any path as ``/***``; query names with
  ``***`` values; user and password as ``***@``;
* anything else (database URLs): the password as ``***``, and the value of any
  query parameter whose name looks secret (``password=``, ``token=``…).

`check_http_url` refuses what the HTTP client cannot parse, schemes other than
http(s), and plain ``http://`` to a host that is not this machine (127.0.0.0/8,
::1, ``localhost``) unless the config explicitly allows it: the API key, the
RPC key and the transactions would travel in clear. `url_problem` says what keeps a
database URL from naming the database meant (a password's unencoded '@').
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from jupcron.errors import ConfigError

MASK = "***"
_HTTP_SCHEMES = frozenset({"http", "https", "ws", "wss"})
# how SQLAlchemy reads the credentials of a database URL (sqlalchemy/engine/url.py,
# `_parse_url`): the user runs to the first ':' or '/', an '@' in it included (Azure's
# ``user@server``), the password from there to the next '@'
_DB_URL = re.compile(r"^(?P<scheme>[\w+.-]+)://(?:(?P<user>[^:/]*)(?::(?P<pw>[^@]*))?@)?", re.S)
_SECRET_NAME = re.compile(r"pass|secret|token|key|auth|cred|sig", re.I)


def mask_url(url: str) -> str:
    """``url`` as it may be shown: no password, token, key or secret path in it."""
    scheme, sep, _ = url.partition("://")
    if not sep:
        return url
    if scheme.lower() in _HTTP_SCHEMES:
        return _mask_http(url, scheme)
    return _mask_database(url)


def _mask_query(query: str, every: bool) -> str:
    shown = []
    for item in query.split("&"):
        name, equals, _ = item.partition("=")
        if not equals:
            shown.append(MASK if every or _SECRET_NAME.search(name) else item)
        elif every or _SECRET_NAME.search(name):
            shown.append(f"{name}={MASK}")
        else:
            shown.append(item)
    return "&".join(shown)


def _mask_http(url: str, scheme: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"{scheme}://{MASK}"
    userinfo, at, hostport = parts.netloc.rpartition("@")
    shown = f"{scheme}://{MASK + '@' if at or userinfo else ''}{hostport}"
    if parts.path not in ("", "/"):
        shown += "/" + MASK
    elif parts.path:
        shown += "/"
    if parts.query:
        shown += "?" + _mask_query(parts.query, every=True)
    if parts.fragment:
        shown += "#" + MASK
    return shown


def _mask_database(url: str) -> str:
    match = _DB_URL.match(url)
    if match is None:
        return url
    head = f"{match['scheme']}://"
    if match["pw"] is not None:
        head += f"{match['user']}:{MASK}@"
    elif match["user"] is not None:
        head += f"{match['user']}@"
    rest = url[match.end() :]
    body, question, query = rest.partition("?")
    return head + body + (question + _mask_query(query, every=False) if question else "")


def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ::1 (written as the address itself)."""
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def check_http_url(url: str, *, section: str, carries: str, allow_insecure: bool) -> str:
    """``url`` if it may be used; else ValueError with the problem (the caller names
    the key; ``section`` is the config section whose ``allow_insecure_http`` applies).

    ``carries`` says what would travel in clear over plain http (for the message).
    The host is the one the HTTP client itself reads from the URL.
    """
    import httpx  # the client's own parser decides; imported here to keep config light

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise ValueError("is not a valid URL") from None
    if parsed.scheme not in ("http", "https"):
        raise ValueError("must start with http:// or https://")
    if not parsed.host:
        raise ValueError("has no host")
    if parsed.scheme == "http" and not allow_insecure and not is_loopback_host(parsed.host):
        raise ValueError(
            f"plain http:// to {parsed.host}, which is not this machine, would send {carries} "
            f"in clear: use https://, or set {section}.allow_insecure_http: true"
        )
    return url


def checked_url(url: str, *, key: str, carries: str, allow_insecure: bool) -> str:
    """`check_http_url` for the config key `key` (``section.name``):
    `ConfigError` naming the key and the URL as masked."""
    section = key.partition(".")[0]
    try:
        return check_http_url(url, section=section, carries=carries, allow_insecure=allow_insecure)
    except ValueError as exc:
        raise ConfigError(f"{key} {mask_url(url)!r}: {exc}") from None


# how a password's special characters are written in a URL
ENCODE_HINT = (
    "write the password percent-encoded: '@' as %40, ':' as %3A, '/' as %2F, "
    "'%' as %25, a space as %20"
)


def url_problem(url: str) -> str | None:
    """What keeps `url` from naming the database meant, in words that never quote
    it (the parts a misread password spills into would show the password); None if
    nothing. A password holding '@' ends at that '@' (as libpq reads a URL too):
    the rest lands in the host, the port or the database name."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return "is not a valid database URL"
    except ValueError:  # what SQLAlchemy makes of a port that is not a number
        return f"has a port that is not a number (if the password holds '@', {ENCODE_HINT})"
    misread = (parsed.host or "") + (parsed.database or "")
    if parsed.get_backend_name() == "postgresql" and "@" in misread:
        return f"has an '@' in its host or database: if the password holds '@', {ENCODE_HINT}"
    return None
