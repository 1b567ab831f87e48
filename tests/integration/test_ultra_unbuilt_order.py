"""Ultra ``GET /order`` for a taker whose swap cannot be built: the documented answer
carries ``transaction: ""`` (an empty string, not null) with ``errorCode`` and
``errorMessage``. Source: jup-ag/docs, openapi-spec/ultra/ultra.yaml at commit
1dda348d206ca25211ec225e250caaf7fbc195d5 (copied in tests/fixtures/openapi): the
``transaction`` field is null only without a taker; ``errorCode`` "will be present if
`taker` is defined and `transaction` is an empty string". The emulator answers so,
and our model reads that answer as a skip (nothing to sign), over loopback HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from jupcron.api.client import JupiterClient
from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from tests.fixtures.emulator import SWAP_REQUEST, USDC, ClientFactory
from tests.fixtures.openapi_spec import examples, validator
from tests.fixtures.receivers import send_json
from tests.fixtures.runner import RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def documented_unbuilt(taker: str) -> dict[str, Any]:
    """The spec's /order example for `taker`, as the spec says it comes when the swap
    cannot be built: an empty transaction with errorCode 1 (insufficient funds)."""
    (example,) = [e for e in examples("ultra") if e.path == "/order" and e.where == "200"]
    body = {**example.body, "taker": taker, "transaction": ""}
    body.update(errorCode=1, errorMessage="Insufficient funds")
    validator("ultra", "/order", "get", "200").validate(body)
    return body


@pytest.fixture
def canned() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A tiny local server answering every GET with the next queued JSON body."""
    answers: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            send_json(self, json.dumps(answers.pop(0)).encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", answers
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_emulators_unbuilt_ultra_order_has_an_empty_transaction(
    emulator: Emulator, emulator_server: EmulatorServer, payer: Wallet
) -> None:
    emulator.ledger.set_balance(payer.address, USDC, 1)
    query = {**{k: str(v) for k, v in SWAP_REQUEST.items()}, "taker": payer.address}
    answer = httpx.get(f"{emulator_server.url}/ultra/v1/order", params=query, timeout=5)
    data = answer.json()
    assert answer.status_code == 200
    assert (data["transaction"], data["errorCode"]) == ("", 1)
    validator("ultra", "/order", "get", "200").validate(data)


def test_the_documented_unbuilt_ultra_order_reads_as_a_skip(
    canned: tuple[str, list[dict[str, Any]]], make_client: ClientFactory, payer: Wallet
) -> None:
    url, answers = canned
    answers.append(documented_unbuilt(payer.address))
    client: JupiterClient = make_client(url)
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.skipped
    assert quote.skip_reason == "insufficient funds"
    assert quote.error_code == 1


def test_an_ultra_run_on_the_documented_unbuilt_order_is_skipped_unsigned(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(loopback=True)
    rig.emulator.ledger.set_balance(rig.wallet.address, USDC, 0)
    outcome = outcome_of(rig.runner().fire(rig.plan("swap"), SLOT))
    assert outcome.status is RunStatus.SKIPPED
    assert outcome.error_code == "1"
    run = rig.run(outcome.run_id)
    assert (run.unsigned_tx, run.signed_tx) == (None, None)
    assert rig.emulator.ledger.requests.get("ultra_order") == 1
    assert "execute_ultra" not in rig.emulator.ledger.requests
