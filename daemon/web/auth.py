"""The optional bearer token of the status page (``web.token_file``).

The token file is a secret like the keypair: checked the same way (a regular
file of ours, no access for group or others), and its text is never logged,
shown or put in an answer. A request is let in with ``Authorization: Bearer
<token>`` (scripts), or with the session cookie a browser gets from ``POST
/login``: an HMAC of the token, so the cookie is not the token itself, and a
new token ends every session. Comparisons take constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import NoReturn

from jupcron.errors import ConfigError
from jupcron.private import read_private
from jupcron.web.http import WebRequest

COOKIE = "jupcron_session"
MIN_LENGTH = 16  # characters: a token is for machines; `openssl rand -hex 32` makes one
_SESSION_LABEL = b"jupcron web session v1"


class Token:
    """A loaded token; its text is reachable only through the checks."""

    __slots__ = ("_session", "_token")

    def __init__(self, token: str) -> None:
        if len(token) < MIN_LENGTH:
            raise ConfigError(f"web.token_file: the token must be at least {MIN_LENGTH} characters")
        if any(ch.isspace() or not ch.isprintable() for ch in token):
            raise ConfigError("web.token_file: the token must be one line of printable characters")
        self._token = token.encode()
        self._session = hmac.new(self._token, _SESSION_LABEL, hashlib.sha256).hexdigest()

    def __repr__(self) -> str:
        return "Token(***)"

    @property
    def session(self) -> str:
        """The cookie value a browser keeps after logging in."""
        return self._session

    def matches(self, given: str) -> bool:
        return hmac.compare_digest(self._token, given.encode())

    def allows(self, request: WebRequest) -> bool:
        header = request.header("authorization") or ""
        scheme, _, given = header.partition(" ")
        if scheme.lower() == "bearer" and given and self.matches(given.strip()):
            return True
        cookie = request.cookie(COOKIE)
        return cookie is not None and hmac.compare_digest(cookie, self._session)


def load_token(path: Path) -> Token:
    """The token in `path` (surrounding white space stripped), after the checks every
    secret file gets (`jupcron.private`); every problem is one `ConfigError` naming it."""

    def fail(problem: str) -> NoReturn:
        raise ConfigError(f"{path}: {problem}")

    raw = read_private(path, "web token", ConfigError, missing="web token file not found "
                       "(set web.token_file, or drop it to run without a token)")  # fmt: skip
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        fail("the web token file is not UTF-8 text")
    if not text:
        fail("the web token file is empty")
    try:
        return Token(text)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {str(exc).removeprefix('web.token_file: ')}") from None
