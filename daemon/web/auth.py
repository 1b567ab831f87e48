"""The optional bearer token of the status page (``web.token_file``).

The token file is a secret like the keypair: checked the same way (a regular
file of ours, no access for group or others), and its text is never logged,
shown or put in an answer. A request is let in with ``Authorization: Bearer
<token>`` (scripts), or with the session cookie a browser gets from ``POST
/login`` (daemon/web/session.py: a random value the server keeps, not the token
nor anything made from it). A new token read at a reload ends every session.
Comparisons take constant time.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import NoReturn

from jupcron.errors import ConfigError
from jupcron.listen.messages import WebRequest
from jupcron.private import read_private

COOKIE = "jupcron_session"
MIN_LENGTH = 16  # characters: a token is for machines; `openssl rand -hex 32` makes one


class Token:
    """A loaded token; its text is reachable only through the checks."""

    __slots__ = ("_token",)

    def __init__(self, token: str) -> None:
        if len(token) < MIN_LENGTH:
            raise ConfigError(f"web.token_file: the token must be at least {MIN_LENGTH} characters")
        if any(ch.isspace() or not ch.isprintable() for ch in token):
            raise ConfigError("web.token_file: the token must be one line of printable characters")
        self._token = token.encode()

    def __repr__(self) -> str:
        return "Token(***)"

    def matches(self, given: str) -> bool:
        return hmac.compare_digest(self._token, given.encode())

    def same(self, other: Token | None) -> bool:
        """The same token text (a reload that read the file again, unchanged)."""
        return other is not None and hmac.compare_digest(self._token, other._token)

    def bearer(self, request: WebRequest) -> bool | None:
        """``Authorization: Bearer``: ``True`` right, ``False`` wrong, ``None`` not given."""
        header = request.header("authorization") or ""
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return None
        return self.matches(given.strip())


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
