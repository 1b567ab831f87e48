"""Review 22d: an answer that echoes our request carries our API key back.

A proxy's or a server's error page that quotes the request it failed on (its
headers, ``x-api-key`` among them) was kept as the API told it: in the error's
message, ``info.error`` and ``info.body``, so in ``runs.error`` and the run's
events, then on the page, in ``audit``, the webhook's and Apprise's messages.
The key is not registered as a masked value (only the Trigger V2 JWT is), so
nothing on the way scrubbed it. Real runner, real SQLite store, a real HTTP
server on loopback that answers 500 with the request's headers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import text

from jupcron.api.classify import garbage, info_for
from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from jupcron.errors import ApiServerError
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_runner import SLOT

API_KEY = "jupKEY-echoed-back-5b2e7d91c0"
ADDRESS = "3TVUJH5dpSs9KkidCaeYBQJzpQDW92T7huLqkqf4zo26"


class EchoServer:
    """Answers every request 500, the request's head quoted in the body (as a
    misbehaving proxy's or a framework's debug error page does)."""

    def __init__(self, *, as_json: bool = False) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        outer = self
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def _echo(self) -> None:
                outer.requests += 1
                self.rfile.read(int(self.headers.get("content-length") or 0))
                quoted = f"{self.command} {self.path}\n{self.headers}"
                if as_json:
                    import json

                    body = json.dumps({"error": f"upstream failed on: {quoted}"}).encode()
                    kind = "application/json"
                else:
                    body = f"Internal error while handling\n{quoted}".encode()
                    kind = "text/plain"
                self.send_response(500)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _echo

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture(params=[False, True], ids=["text", "json"])
def echo_server(request: pytest.FixtureRequest) -> Iterator[EchoServer]:
    server = EchoServer(as_json=request.param)
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


def _client(url: str) -> JupiterClient:
    return JupiterClient(
        url, api_key=SecretStr(API_KEY), max_attempts=2, rate_limit=1000, sleep=lambda s: None
    )


def test_an_echoed_api_key_is_in_no_error_the_client_raises(echo_server: EchoServer) -> None:
    with _client(echo_server.url) as client, pytest.raises(ApiServerError) as raised:
        client.positions(ADDRESS)
    assert echo_server.requests == 2  # the key went out (and the 500 was retried)
    error = raised.value
    shown = " ".join(
        str(part) for part in (error, error.info.error, error.info.cause, error.info.body)
    )
    assert API_KEY not in shown, shown
    assert "x-api-key" in shown.lower()  # what the server said is kept, the key masked


def test_an_echoed_api_key_reaches_no_row_of_the_store(
    make_rig: RigFactory, echo_server: EchoServer
) -> None:
    rig = make_rig()
    with _client(echo_server.url) as client:
        outcome = outcome_of(rig.runner(api=client).fire(rig.plan("swap"), SLOT))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.FAILED, run.error
    assert echo_server.requests >= 1
    assert run.error
    assert "500" in run.error
    with rig.engine.connect() as conn:
        stored = [
            repr(tuple(row))
            for table in ("runs", "run_events")
            for row in conn.execute(text(f"SELECT * FROM {table}"))  # noqa: S608
        ]
    assert stored
    assert all(API_KEY not in row for row in stored), stored


def test_a_response_without_its_request_is_described_as_before() -> None:
    """An answer built without a request (a test's, a parser's) still gives its text."""
    response = httpx.Response(500, text="plain failure")
    info = info_for("positions", response)
    assert (info.http_status, info.error, info.body) == (500, "plain failure", "plain failure")


def test_a_bearer_token_echoed_back_is_masked_whatever_its_shape() -> None:
    """Trigger V2's ``Authorization: Bearer``: the token alone, as an echo quotes it."""
    token = "opaque-session-token-61d0aa"  # not JWT-shaped: no pattern would catch it
    request = httpx.Request(
        "GET", "https://api.example/trigger/v2/orders", headers={"Authorization": f"Bearer {token}"}
    )
    response = httpx.Response(403, text=f"token {token} is not yours", request=request)
    info = info_for("trigger_v2_orders", response)
    assert info.error == "token *** is not yours"
    assert token not in (info.body or "")


def test_a_parsers_reason_quoting_the_answer_is_scrubbed_too() -> None:
    """A parser's reason may quote the answer (a validation error's input value)."""
    request = httpx.Request("GET", "https://api.example/x", headers={"x-api-key": API_KEY})
    response = httpx.Response(200, json={"echo": API_KEY}, request=request)
    error = garbage("tokens", response, f"input_value='{API_KEY}' is not a list")
    assert API_KEY not in str(error)
    assert API_KEY not in (error.info.error or "") + (error.info.body or "")
    assert "input_value='***'" in str(error)
