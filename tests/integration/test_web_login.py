"""Signing in to the status page over loopback HTTP: wrong tokens locked out per
address (429, Retry-After, a log line each, never the token), the cookie's
attributes (Max-Age, HttpOnly, SameSite=Strict, Secure per web.secure_cookie),
sessions that expire and end at sign-out on the server, and a new token (a
reload, or the token file rewritten) ending the old token and every session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from jupcron.config import Config, WebConfig
from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader
from jupcron.web.access import Access, SecureCookie
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from jupcron.web.auth import COOKIE, Token
from jupcron.web.guard import LOCKOUT, MAX_FAILURES
from jupcron.web.serve import WebServer, plain_http_warning, start_web
from tests.integration.test_web_api import live
from tests.support import stopping

TOKEN = "s3cret-token-0123456789abcdef"
NEW_TOKEN = "n3w-token-fedcba9876543210xyz"
WRONG = "wrong-token-0123456789abcdef"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Site:
    url: str
    access: Access
    clock: Clock


def _site(sqlite_url: str, secure: SecureCookie = "auto") -> Iterator[Site]:
    clock = Clock()
    access = Access(Token(TOKEN), max_age=3600, secure_cookie=secure, monotonic=clock)
    engine = open_reader(sqlite_url)
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity(), access=access)
    server: Listener = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield Site(server.url, access, clock)
    stopping.later(server.stop, engine.dispose)  # behind the test, in this order


@pytest.fixture
def site(sqlite_url: str) -> Iterator[Site]:
    yield from _site(sqlite_url)


def sign_in(client: httpx.Client, token: str = TOKEN) -> httpx.Response:
    return client.post("/login", data={"token": token})


def texts(logs: list[dict[str, Any]]) -> str:
    return json.dumps(logs, default=str)


def test_wrong_tokens_lock_the_address_out_and_each_is_logged(site: Site) -> None:
    with httpx.Client(base_url=site.url, timeout=10) as client, capture_logs() as logs:
        for _ in range(MAX_FAILURES - 1):
            assert sign_in(client, WRONG).status_code == 401
        locked = sign_in(client, WRONG)
        assert locked.status_code == 429
        assert int(locked.headers["retry-after"]) == LOCKOUT
        assert 'id="locked"' in locked.text
        # locked: the right token too, and a bearer, until the lockout ends
        assert sign_in(client, TOKEN).status_code == 429
        bearer = client.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"})
        assert bearer.status_code == 429
        assert "try again" in bearer.json()["error"]
        site.clock.now += LOCKOUT - 1
        assert sign_in(client, TOKEN).status_code == 429
        site.clock.now += 1
        assert sign_in(client, TOKEN).status_code == 303
    failed = [e for e in logs if e["event"] == "web_login_failed"]
    assert [e["failures"] for e in failed] == list(range(1, MAX_FAILURES + 1))
    assert all(e["client"] == "127.0.0.1" and e["via"] == "form" for e in failed)
    assert [e["event"] for e in logs].count("web_login_locked") == 1
    assert WRONG not in texts(logs)
    assert TOKEN not in texts(logs)


def test_wrong_bearer_tokens_count_too_and_a_sign_in_clears_the_count(site: Site) -> None:
    wrong = {"Authorization": f"Bearer {WRONG}"}
    with httpx.Client(base_url=site.url, timeout=10) as client:
        for _ in range(MAX_FAILURES - 1):
            assert client.get("/api/status", headers=wrong).status_code == 401
        assert sign_in(client).status_code == 303  # the count starts again
        client.cookies.clear()
        for _ in range(MAX_FAILURES - 1):
            assert client.get("/api/status", headers=wrong).status_code == 401
        assert client.get("/api/status", headers=wrong).status_code == 429
        # no credentials at all is not a failure: 429 only for tries
        assert client.get("/api/status").status_code == 401


def test_failures_outside_the_window_do_not_add_up(site: Site) -> None:
    with httpx.Client(base_url=site.url, timeout=10) as client:
        for _ in range(MAX_FAILURES * 2):
            assert sign_in(client, WRONG).status_code == 401
            site.clock.now += 80  # a 300 s window: never five inside it
    # another address is not locked by this one's failures (the guard is per address)
    assert site.access.guard.locked_for("192.0.2.1") == 0


def test_the_cookie_expires_and_the_server_forgets_it(site: Site) -> None:
    with httpx.Client(base_url=site.url, timeout=10) as client:
        answer = sign_in(client)
        cookie = answer.headers["set-cookie"]
        assert "Max-Age=3600" in cookie
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert "Secure" not in cookie  # plain http, no proxy said https
        assert TOKEN not in cookie
        value = client.cookies[COOKIE]
        assert client.get("/api/status").status_code == 200
        site.clock.now += 3599
        assert client.get("/api/status").status_code == 200
        site.clock.now += 1
    # the same value, sent by hand (a browser that kept it longer): refused
    again = httpx.get(site.url + "/api/status", cookies={COOKIE: value}, timeout=10)
    assert again.status_code == 401


def test_sign_out_ends_the_session_on_the_server(site: Site) -> None:
    with httpx.Client(base_url=site.url, timeout=10) as client:
        sign_in(client)
        value = client.cookies[COOKIE]
        page = client.get("/")
        assert 'action="/logout"' in page.text
        # another site's form cannot sign the visitor out (nor in)
        stranger = client.post("/logout", headers={"Origin": "http://evil.example"})
        assert stranger.status_code == 403
        assert client.get("/api/status").status_code == 200
        out = client.post("/logout")
        assert out.status_code == 303
        assert "Max-Age=0" in out.headers["set-cookie"]
    replay = httpx.get(site.url + "/api/status", cookies={COOKIE: value}, timeout=10)
    assert replay.status_code == 401
    # a bearer never sees the sign-out form (there is no session to end)
    page = httpx.get(site.url + "/", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert page.status_code == 200
    assert 'action="/logout"' not in page.text


@pytest.mark.parametrize(("secure", "headers", "expected"), [
    ("auto", {}, False),
    ("auto", {"X-Forwarded-Proto": "https"}, True),
    ("auto", {"Forwarded": 'for=192.0.2.60;proto="https";by=203.0.113.43'}, True),
    ("auto", {"X-Forwarded-Proto": "http"}, False),
    (True, {}, True),
    (False, {"X-Forwarded-Proto": "https"}, False),
])  # fmt: skip
def test_secure_follows_web_secure_cookie(
    sqlite_url: str, secure: SecureCookie, headers: dict[str, str], expected: bool
) -> None:
    for found in _site(sqlite_url, secure):
        answer = httpx.post(found.url + "/login", data={"token": TOKEN}, headers=headers,
                            timeout=10)  # fmt: skip
        cookie = answer.headers["set-cookie"]
        assert ("; Secure" in cookie) is expected, cookie
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie


def test_a_new_token_ends_the_old_one_and_every_session(site: Site) -> None:
    with httpx.Client(base_url=site.url, timeout=10) as client:
        sign_in(client)
        assert client.get("/api/status").status_code == 200
        site.access.configure(Token(TOKEN), max_age=3600, secure_cookie="auto")  # the same
        assert client.get("/api/status").status_code == 200
        with capture_logs() as logs:
            site.access.configure(Token(NEW_TOKEN), max_age=3600, secure_cookie="auto")
        assert [e["sessions_ended"] for e in logs if e["event"] == "web_token_changed"] == [1]
        assert client.get("/api/status").status_code == 401
    old = {"Authorization": f"Bearer {TOKEN}"}
    new = {"Authorization": f"Bearer {NEW_TOKEN}"}
    assert httpx.get(site.url + "/api/status", headers=old, timeout=10).status_code == 401
    assert httpx.get(site.url + "/api/status", headers=new, timeout=10).status_code == 200


# ---- through the config: start_web, a reload, the token file watched ---------------


def _private(path: Path, text: str) -> Path:
    path.write_text(text + "\n")
    path.chmod(0o600)
    return path


def _config(sqlite_url: str, token_file: Path, **web: Any) -> Config:
    return Config.model_validate({
        "database": {"url": sqlite_url},
        "web": {"listen": "127.0.0.1:0", "token_file": str(token_file), **web},
    })  # fmt: skip


@pytest.fixture
def served(sqlite_url: str, tmp_path: Path) -> Iterator[tuple[WebServer, Config, Path]]:
    token_file = _private(tmp_path / "web-token", TOKEN)
    config = _config(sqlite_url, token_file)
    server = start_web(config, metrics=Metrics(), health=lambda: True, live=live,
                       activity=Activity())  # fmt: skip
    assert server is not None
    yield server, config, token_file
    stopping.stop_later(server)  # behind the test


def _rewrite(path: Path, text: str) -> None:
    """A new token file renamed over the old (what `install -m 600` does)."""
    fresh = _private(path.with_suffix(".new"), text)
    fresh.replace(path)


def test_a_reload_with_a_rewritten_token_file_ends_old_token_and_sessions(
    served: tuple[WebServer, Config, Path],
) -> None:
    server, config, token_file = served
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert sign_in(client).status_code == 303
        _rewrite(token_file, NEW_TOKEN)
        server.apply(config, "signal")
        assert client.get("/api/status").status_code == 401
        assert sign_in(client, TOKEN).status_code == 401
        assert sign_in(client, NEW_TOKEN).status_code == 303
        assert client.get("/api/status").status_code == 200


def test_the_token_file_is_followed_without_a_reload(
    served: tuple[WebServer, Config, Path],
) -> None:
    server, config, token_file = served
    with httpx.Client(base_url=server.url, timeout=10) as client:
        sign_in(client)
        server.follow(config)
        assert client.get("/api/status").status_code == 200  # unchanged: nothing ends
        _rewrite(token_file, NEW_TOKEN)
        server.follow(config)  # changed: looked at again next turn (an editor may write)
        server.follow(config)
        assert client.get("/api/status").status_code == 401
        bearer = {"Authorization": f"Bearer {NEW_TOKEN}"}
        assert client.get("/api/status", headers=bearer).status_code == 200


def test_a_token_file_gone_bad_at_a_reload_locks_the_page(
    served: tuple[WebServer, Config, Path],
) -> None:
    server, config, token_file = served
    with httpx.Client(base_url=server.url, timeout=10) as client:
        sign_in(client)
        token_file.chmod(0o644)
        with capture_logs() as logs:
            server.apply(config, "signal")
        assert [e["event"] for e in logs if e["log_level"] == "error"] == ["web_locked"]
        assert TOKEN not in texts(logs)
        for headers in ({}, {"Authorization": f"Bearer {TOKEN}"}):
            locked = client.get("/api/status", headers=headers)
            assert locked.status_code == 503
            assert "token file" in locked.text
        assert sign_in(client).status_code == 503
        token_file.chmod(0o600)
        server.apply(config, "signal")
        assert client.get("/api/status").status_code == 401  # the old session stays ended
        assert sign_in(client).status_code == 303


def test_session_settings_follow_a_reload(
    served: tuple[WebServer, Config, Path], sqlite_url: str
) -> None:
    server, _, token_file = served
    server.apply(_config(sqlite_url, token_file, session_max_age=600, secure_cookie=True),
                 "file")  # fmt: skip
    answer = httpx.post(server.url + "/login", data={"token": TOKEN}, timeout=10)
    assert "Max-Age=600" in answer.headers["set-cookie"]
    assert "; Secure" in answer.headers["set-cookie"]


@pytest.mark.parametrize(("listen", "secure", "warned"), [
    ("0.0.0.0:8080", "auto", True),
    ("192.0.2.7:8080", False, True),
    ("0.0.0.0:8080", True, False),  # a TLS proxy in front, declared
    ("127.0.0.1:8080", "auto", False),
    ("[::1]:8080", "auto", False),
])  # fmt: skip
def test_a_token_over_plain_http_on_a_network_address_is_warned_of(
    tmp_path: Path, listen: str, secure: SecureCookie, warned: bool
) -> None:
    web = WebConfig(listen=listen, token_file=tmp_path / "t", secure_cookie=secure)
    warning = plain_http_warning(Config(web=web))
    assert (warning is not None) is warned
    if warning:
        assert "plain http" in warning
        assert "web.secure_cookie: true" in warning
