"""`jupcron.api.http.RequestBuilder`: the requests it builds directly are the ones
httpx's client builds from its base URL, headers and params."""

from __future__ import annotations

import httpx
import pytest

from jupcron.api.http import RequestBuilder, SessionlessClient

BASE = "http://127.0.0.1:8899/api"
HEADERS = {"accept": "application/json", "user-agent": "jupcron/test", "x-api-key": "k"}
PARAMS = {"inputMint": "A", "amount": "10", "excludeRouters": "dflow,okx", "note": "a b&c"}


def client_request(
    method: str, path: str, content: bytes | None, params: dict[str, str] | None
) -> httpx.Request:
    with httpx.Client(base_url=BASE, headers=HEADERS) as client:
        headers = {"content-type": "application/json"} if content is not None else None
        return client.build_request(method, path, content=content, params=params, headers=headers)


def as_httpx_builds(
    headers: dict[str, str], method: str, path: str, content: bytes | None,
    params: dict[str, str] | None,
) -> httpx.Request:  # fmt: skip
    """The request httpx's own `Request` makes of the builder's headers (what the
    builder gave before it added httpx's headers itself)."""
    if content is not None:
        headers = {**headers, "content-type": "application/json"}
    url = httpx.URL(BASE + path, params=params)
    return httpx.Request(method, url, content=content, headers=headers)


CASES = [
    ("GET", "/swap/v2/order", None, PARAMS),
    ("GET", "/tokens/v2/search", None, None),
    ("POST", "/swap/v2/execute", b'{"requestId":"r"}', None),
    ("POST", "/swap/v2/execute", b'{"requestId":"a longer one"}', None),
    ("POST", "/recurring/v1/cancelOrder", None, None),  # no body: Content-Length 0
    ("DELETE", "/x", None, {"a": "1"}),
]


def test_requests_are_what_the_client_would_send() -> None:
    with httpx.Client(base_url=BASE, headers=HEADERS) as client:  # as the transport does
        headers = {**client.headers}
        build = RequestBuilder(BASE, headers)
    for method, path, content, params in CASES:
        for _ in range(2):  # built, then from the URL and headers kept
            ours, theirs = (
                build(method, path, content, params),
                client_request(method, path, content, params),
            )
            assert (ours.method, ours.url, ours.content) == (
                theirs.method,
                theirs.url,
                theirs.content,
            )
            assert sorted(ours.headers.items()) == sorted(theirs.headers.items())
            # on the wire: the same header lines, in the same order, as httpx's Request
            # makes of these headers, and the same body
            generic = as_httpx_builds(headers, method, path, content, params)
            assert ours.headers.raw == generic.headers.raw
            assert b"".join(ours.stream) == b"".join(generic.stream) == (content or b"")


@pytest.mark.parametrize("given", [{"Host": "elsewhere"}, {"content-length": "3"}])
def test_headers_that_change_httpxs_own_are_left_to_httpx(given: dict[str, str]) -> None:
    headers = {**HEADERS, **given}
    build = RequestBuilder(BASE, headers)
    for method, path, content, params in CASES:
        generic = as_httpx_builds(headers, method, path, content, params)
        assert build(method, path, content, params).headers.raw == generic.headers.raw


def test_extra_headers_join_the_builders_own_and_change_nothing_after() -> None:
    build = RequestBuilder(BASE, HEADERS)
    first = build("POST", "/trigger/v2/orders", b"{}", None, {"authorization": "Bearer t"})
    assert first.headers["authorization"] == "Bearer t"
    assert first.headers["x-api-key"] == "k"
    assert first.headers["content-type"] == "application/json"
    later = build("POST", "/trigger/v2/orders", b"{}", None)
    assert "authorization" not in later.headers
    later.headers["x-extra"] = "1"  # a request's headers are its own
    assert "x-extra" not in build("GET", "/x", None, None).headers


def test_an_exchange_is_what_send_gives_through_the_transport_send_would_use() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/down"):
            raise httpx.ConnectError("refused")
        return httpx.Response(302 if request.url.path.endswith("/moved") else 200,
                              headers={"location": "/elsewhere", "set-cookie": "a=b"},
                              json={"path": request.url.path})  # fmt: skip

    mounted = httpx.MockTransport(answer)
    unused = httpx.MockTransport(lambda r: httpx.Response(500))
    client = SessionlessClient(
        base_url=BASE, transport=unused, mounts={"http://127.0.0.1:8899": mounted},
        timeout=httpx.Timeout(7, connect=3), follow_redirects=False,
    )  # fmt: skip
    ours = client.exchange(httpx.Request("GET", BASE + "/swap"))
    theirs = client.send(httpx.Request("GET", BASE + "/swap"))
    assert (ours.status_code, ours.json(), ours.is_closed) == (200, {"path": "/api/swap"}, True)
    assert (theirs.status_code, theirs.json()) == (ours.status_code, ours.json())
    assert seen[0].extensions["timeout"] == seen[1].extensions["timeout"]
    assert seen[0].extensions["timeout"]["connect"] == 3
    assert client.exchange(httpx.Request("GET", BASE + "/moved")).status_code == 302  # not followed
    assert not client.cookies
    down = httpx.Request("GET", BASE + "/down")
    with pytest.raises(httpx.ConnectError) as refused:
        client.exchange(down)
    assert refused.value.request is down
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.exchange(httpx.Request("GET", BASE + "/swap"))
