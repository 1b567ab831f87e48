"""Who may see the status page: the token, the sessions, sign-in and sign-out.

no token (loopback only) ─► everyone who reaches the listener
a token ─► ``Authorization: Bearer TOKEN``, or a live session cookie
POST /login  (same origin) ─► a wrong token counts against the address (guard.py);
                              the right one starts a session: cookie HttpOnly,
                              SameSite=Strict, Max-Age = web.session_max_age,
                              Secure per web.secure_cookie
POST /logout (same origin) ─► the session ends on the server; the cookie is cleared
a reload (daemon/web/serve.py) ─► a changed token ends every session; a token file
                                  that no longer loads locks the page until fixed
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import structlog

from jupcron.listen.messages import MAX_BODY, WebRequest, WebResponse
from jupcron.web.auth import COOKIE, Token
from jupcron.web.guard import LoginGuard
from jupcron.web.http import HTML, json_response, text_response
from jupcron.web.render import render
from jupcron.web.session import Sessions

log = structlog.get_logger(__name__)

CHALLENGE = ("WWW-Authenticate", 'Bearer realm="jupcron"')
SecureCookie = Literal["auto"] | bool


class Access:
    def __init__(
        self,
        token: Token | None,
        *,
        max_age: float = 43_200.0,
        secure_cookie: SecureCookie = "auto",
        monotonic: Callable[[], float] = time.monotonic,
        guard: LoginGuard | None = None,
    ) -> None:
        self.token = token
        self.secure_cookie = secure_cookie
        self.sessions = Sessions(max_age, monotonic=monotonic)
        self.guard = guard or LoginGuard(monotonic=monotonic)
        self.locked: str | None = None  # why nobody is let in (a token file gone bad)
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        """No token and not locked: the page answers everyone (loopback only)."""
        return self.token is None and self.locked is None

    # ---- a reload --------------------------------------------------------------------

    def configure(
        self, token: Token | None, *, max_age: float, secure_cookie: SecureCookie
    ) -> None:
        """The settings of a reload; another token (or none) ends every session."""
        with self._lock:
            changed = self.locked is not None or not (
                token.same(self.token) if token is not None else self.token is None
            )
            self.token, self.locked = token, None
            self.sessions.max_age, self.secure_cookie = max_age, secure_cookie
        if changed:
            ended = self.sessions.end_all()
            log.warning("web_token_changed", sessions_ended=ended, token=token is not None)

    def lock(self, reason: str) -> None:
        """The token file no longer loads: nobody is let in, every session ends."""
        with self._lock:
            self.token, self.locked = None, reason
        ended = self.sessions.end_all()
        log.error("web_locked", reason=reason, sessions_ended=ended,
                  fix="fix web.token_file, then reload (SIGHUP)")  # fmt: skip

    # ---- each request ------------------------------------------------------------------

    def refused(self, request: WebRequest) -> WebResponse | None:
        """``None`` when the request may be answered, else the answer it gets."""
        if self.locked is not None:
            return text_response(503, "this page is locked until its token file is fixed\n")
        token = self.token
        if token is None:
            return None
        if self.sessions.alive(request.cookie(COOKIE)):
            return None
        bearer = token.bearer(request)
        if bearer is not None:
            wait = self.guard.locked_for(request.client)
            if wait:
                return self._too_many(request.path, wait)
            if bearer:
                return None
            wait = self.guard.failed(request.client, "bearer")
            if wait:
                return self._too_many(request.path, wait)
        return self._unauthorized(request.path)

    def signed_in(self, request: WebRequest) -> bool:
        """Came with a live session (the page then offers to sign out)."""
        return self.token is not None and self.sessions.alive(request.cookie(COOKIE))

    def login(self, request: WebRequest) -> WebResponse:
        token = self.token
        if token is None:
            return self.refused(request) or _see_other()
        if not _same_origin(request):
            return text_response(403, "cross-site sign-in refused\n")
        wait = self.guard.locked_for(request.client)
        if wait:
            return self._too_many("/", wait)
        form = parse_qs(request.body[:MAX_BODY].decode("utf-8", "replace"))
        given = (form.get("token") or [""])[0].strip()
        if not given or not token.matches(given):
            wait = self.guard.failed(request.client, "form")
            if wait:
                return self._too_many("/", wait)
            body = render("login.html", wrong=True, wait=0).encode()
            return WebResponse(401, body, HTML, (CHALLENGE,))
        self.guard.succeeded(request.client)
        session = self.sessions.start()
        max_age = int(self.sessions.max_age)
        log.info("web_login", client=request.client, max_age=max_age)
        cookie = f"{COOKIE}={session}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict"
        return _see_other(cookie + self._secure(request))

    def logout(self, request: WebRequest) -> WebResponse:
        if not _same_origin(request):
            return text_response(403, "cross-site sign-out refused\n")
        if self.sessions.end(request.cookie(COOKIE)):
            log.info("web_logout", client=request.client)
        cleared = f"{COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"
        return _see_other(cleared + self._secure(request))

    # ---- answers -----------------------------------------------------------------------

    def _secure(self, request: WebRequest) -> str:
        secure = self.secure_cookie
        if secure == "auto":
            secure = request.via_https()
        return "; Secure" if secure else ""

    def _unauthorized(self, path: str) -> WebResponse:
        if path == "/":
            body = render("login.html", wrong=False, wait=0).encode()
            return WebResponse(401, body, HTML, (CHALLENGE,))
        return json_response({"error": "a valid token is needed"}, 401, **dict((CHALLENGE,)))

    def _too_many(self, path: str, wait: int) -> WebResponse:
        retry = ("Retry-After", str(wait))
        if path == "/":
            body = render("login.html", wrong=False, wait=wait).encode()
            return WebResponse(429, body, HTML, (retry,))
        text = f"too many wrong tokens from this address: try again in {wait} s"
        return json_response({"error": text}, 429, **dict((retry,)))


def _same_origin(request: WebRequest) -> bool:
    """No ``Origin`` (not a browser's cross-site form) or this page's own."""
    origin = request.header("origin")
    return not origin or urlsplit(origin).netloc == (request.header("host") or "")


def _see_other(cookie: str | None = None) -> WebResponse:
    headers = [("Location", "/")]
    if cookie is not None:
        headers.append(("Set-Cookie", cookie))
    return WebResponse(303, b"", HTML, tuple(headers))
