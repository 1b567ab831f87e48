"""`jupcron.api.http.RequestBuilder`: the requests it builds directly are the ones
httpx's client builds from its base URL, headers and params."""

from __future__ import annotations

import httpx

from jupcron.api.http import RequestBuilder

BASE = "http://127.0.0.1:8899/api"
HEADERS = {"accept": "application/json", "user-agent": "jupcron/test", "x-api-key": "k"}
PARAMS = {"inputMint": "A", "amount": "10", "excludeRouters": "dflow,okx", "note": "a b&c"}


def client_request(
    method: str, path: str, content: bytes | None, params: dict[str, str] | None
) -> httpx.Request:
    with httpx.Client(base_url=BASE, headers=HEADERS) as client:
        headers = {"content-type": "application/json"} if content is not None else None
        return client.build_request(method, path, content=content, params=params, headers=headers)


def test_requests_are_what_the_client_would_send() -> None:
    with httpx.Client(base_url=BASE, headers=HEADERS) as client:  # as the transport does
        build = RequestBuilder(BASE, {**client.headers})
    for method, path, content, params in [
        ("GET", "/swap/v2/order", None, PARAMS),
        ("GET", "/tokens/v2/search", None, None),
        ("POST", "/swap/v2/execute", b'{"requestId":"r"}', None),
    ]:
        for _ in range(2):  # built, then from the URL kept
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
