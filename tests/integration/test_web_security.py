"""The status page's defences over loopback HTTP: the headers a scanner expects on
every answer, the token (401, the sign-in form, the cookie), requests addressed
to a name other than localhost or an IP, read-only methods, and bad input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from jupcron.web.auth import COOKIE, Token, load_token
from tests.integration.test_web_api import live
from tests.support import stopping

TOKEN = "s3cret-token-0123456789abcdef"
PAGES = ["/", "/api/status", "/api/plans", "/api/runs", "/metrics", "/charts/x.svg",
         "/api/plans/x/fills", "/static/app.js", "/static/app.css", "/nothing"]  # fmt: skip


def serve(url: str, token: Token | None) -> tuple[Listener, object]:
    engine = open_reader(url)
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity(), token=token)
    return start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen"), engine


@pytest.fixture
def open_site(sqlite_url: str) -> Iterator[str]:
    server, engine = serve(sqlite_url, None)
    yield server.url
    stopping.later(server.stop, engine.dispose)  # type: ignore[attr-defined]


@pytest.fixture
def locked_site(sqlite_url: str) -> Iterator[str]:
    server, engine = serve(sqlite_url, Token(TOKEN))
    yield server.url
    stopping.later(server.stop, engine.dispose)  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", PAGES)
def test_every_answer_carries_the_security_headers(open_site: str, path: str) -> None:
    answer = httpx.get(open_site + path, timeout=10)
    csp = answer.headers["content-security-policy"]
    assert "unsafe-inline" not in csp
    assert "unsafe-eval" not in csp
    assert "default-src 'none'" in csp
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("path", ["/", "/api/status", "/api/plans", "/api/runs", "/metrics",
                                  "/charts/x.svg", "/api/plans/x/fills"])  # fmt: skip
def test_a_missing_or_wrong_token_is_401(locked_site: str, path: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"},
                    {"Authorization": f"Basic {TOKEN}"}, {"Cookie": f"{COOKIE}={TOKEN}"}):  # fmt: skip
        answer = httpx.get(locked_site + path, headers=headers, timeout=10)
        assert answer.status_code == 401, (path, headers)
        assert answer.headers["www-authenticate"] == 'Bearer realm="jupcron"'
        assert TOKEN not in answer.text
    good = httpx.get(locked_site + path, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert good.status_code in (200, 404)  # x has no chart: found only with the token


def test_health_and_the_pages_assets_need_no_token(locked_site: str) -> None:
    assert httpx.get(locked_site + "/healthz", timeout=10).status_code == 200
    assert httpx.get(locked_site + "/static/app.css", timeout=10).status_code == 200
    form = httpx.get(locked_site + "/", timeout=10)
    assert form.status_code == 401
    assert 'action="/login"' in form.text


def test_signing_in_sets_a_cookie_that_is_not_the_token(locked_site: str) -> None:
    with httpx.Client(base_url=locked_site, timeout=10) as client:
        wrong = client.post("/login", data={"token": "not-it-0123456789abc"})
        assert wrong.status_code == 401
        assert 'id="wrong"' in wrong.text
        assert client.get("/api/status").status_code == 401
        right = client.post("/login", data={"token": TOKEN})
        assert right.status_code == 303
        assert right.headers["location"] == "/"
        cookie = right.headers["set-cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert TOKEN not in cookie
        assert client.get("/api/status").status_code == 200
        assert client.get("/").status_code == 200
    stranger = httpx.post(locked_site + "/login", data={"token": TOKEN}, timeout=10,
                          headers={"Origin": "http://evil.example"})  # fmt: skip
    assert stranger.status_code == 403


@pytest.mark.parametrize(("host", "status"), [
    ("evil.example", 403), ("evil.example:80", 403), ("127.0.0.1.nip.io", 403),
    ("localhost", 200), ("127.0.0.1:9", 200), ("[::1]:8080", 200),
])  # fmt: skip
def test_without_a_token_only_localhost_or_an_ip_is_answered(
    open_site: str, host: str, status: int
) -> None:
    answer = httpx.get(open_site + "/api/status", headers={"Host": host}, timeout=10)
    assert answer.status_code == status


def test_with_a_token_any_host_name_may_be_used(locked_site: str) -> None:
    headers = {"Host": "jupcron.internal", "Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(locked_site + "/api/status", headers=headers, timeout=10).status_code == 200


@pytest.mark.parametrize(("method", "path", "status"), [
    ("POST", "/api/status", 405), ("PUT", "/", 501), ("DELETE", "/api/plans", 501),
    ("POST", "/", 405),
])  # fmt: skip
def test_read_only(open_site: str, method: str, path: str, status: int) -> None:
    assert httpx.request(method, open_site + path, timeout=10).status_code == status


@pytest.mark.parametrize(("path", "message"), [
    ("/api/plans?offset=abc", "offset must be a whole number, not 'abc'"),
    ("/api/plans?limit=-1", "limit must be a whole number, not '-1'"),
    ("/api/runs?limit=1e9", "limit must be a whole number, not '1e9'"),
    ("/?offset=9999999999", "offset must be a whole number, not '9999999999'"),
])  # fmt: skip
def test_bad_query_values_are_400_with_the_reason(open_site: str, path: str, message: str) -> None:
    answer = httpx.get(open_site + path, timeout=10)
    assert answer.status_code == 400
    assert answer.json() == {"error": message}


def test_a_large_body_is_refused(locked_site: str) -> None:
    answer = httpx.post(locked_site + "/login", content=b"x" * 5000, timeout=10)
    assert answer.status_code == 413


@pytest.mark.parametrize(("content", "mode", "problem"), [
    (TOKEN, 0o644, "permissions 0644 are too open"),
    (TOKEN, 0o640, "permissions 0640 are too open"),
    ("", 0o600, "the web token file is empty"),
    ("short", 0o600, "the token must be at least 16 characters"),
    ("two words-0123456789", 0o600, "one line of printable characters"),
])  # fmt: skip
def test_the_token_file_is_checked_like_the_keypair(
    tmp_path: Path, content: str, mode: int, problem: str
) -> None:
    from jupcron.errors import ConfigError

    path = tmp_path / "web-token"
    path.write_text(content + "\n")
    path.chmod(mode)
    with pytest.raises(ConfigError, match=problem) as caught:
        load_token(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert TOKEN not in str(caught.value)
    with pytest.raises(ConfigError, match="web token file not found"):
        load_token(tmp_path / "missing")


def test_a_good_token_file_loads_and_never_shows_its_text(tmp_path: Path) -> None:
    path = tmp_path / "web-token"
    path.write_text(f"  {TOKEN}\n")
    path.chmod(0o600)
    token = load_token(path)
    assert token.matches(TOKEN)
    assert not token.matches(TOKEN + "x")
    assert TOKEN not in repr(token)
    assert token.same(Token(TOKEN))
    assert not token.same(Token(TOKEN + "x"))
