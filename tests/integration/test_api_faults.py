"""Every emulator fault mode over real loopback HTTP turns into the right typed
error or retry, with the attempts recorded by the observer."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from solders.pubkey import Pubkey

from jupcron.api.client import JupiterClient
from jupcron.chain.wallet import Wallet
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.errors import (
    ApiAuthError,
    ApiGarbageError,
    ApiServerError,
    ApiTransportError,
    GuardRejectedError,
)
from jupcron.txguard import GuardPolicy, check
from tests.fixtures.emulator import SWAP_REQUEST, ClientFactory, FakeTime, Recorder, sign


@pytest.fixture
def client(emulator_server: EmulatorServer, make_client: ClientFactory) -> JupiterClient:
    return make_client(emulator_server.url, max_attempts=4)


def inject(server: EmulatorServer, **fault: Any) -> None:
    """At run time, through the control endpoint, as a chaos run would."""
    answer = httpx.post(f"{server.url}/_emulator/faults", json=fault)
    assert answer.status_code == 200, answer.text


def swap(client: JupiterClient, payer: Wallet, recorder: Recorder | None = None) -> Any:
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    signed = sign(payer, quote.transaction)
    return client.execute_ultra(signed, quote.request_id, recorder)


def test_rate_limit_honours_retry_after(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet, fake_time: FakeTime
) -> None:
    inject(emulator_server, kind="rate_limit", retry_after=7, operation="ultra_order")
    recorder = Recorder()
    quote = client.ultra_order(payer.address, SWAP_REQUEST, recorder)
    assert quote.transaction is not None
    assert recorder.statuses == [429, 200]
    assert recorder.attempts[0].error is not None
    assert recorder.attempts[0].error.startswith("RateLimitedError")
    assert recorder.attempts[1].waited >= 7


def test_server_errors_are_retried_with_backoff(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet, fake_time: FakeTime
) -> None:
    inject(emulator_server, kind="server_error", count=2, status=503)
    recorder = Recorder()
    client.positions(payer.address, observe=recorder)
    assert recorder.statuses == [503, 503, 200]
    assert [a.number for a in recorder.attempts] == [1, 2, 3]
    assert recorder.attempts[2].waited >= recorder.attempts[1].waited > 0


def test_server_errors_are_bounded_by_max_attempts(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    inject(emulator_server, kind="server_error", count=0)  # until cleared
    recorder = Recorder()
    with pytest.raises(ApiServerError) as caught:
        client.positions(payer.address, observe=recorder)
    assert recorder.statuses == [500] * 4
    assert caught.value.info.http_status == 500


def test_slow_answer_times_out_and_is_retried(
    emulator_server: EmulatorServer, make_client: ClientFactory, payer: Wallet
) -> None:
    client = make_client(emulator_server.url, read_timeout=0.3)
    inject(emulator_server, kind="slow", seconds=1.5, operation="positions")
    recorder = Recorder()
    client.positions(payer.address, observe=recorder)
    assert recorder.statuses == [None, 200]
    assert recorder.attempts[0].error is not None
    assert "ApiTransportError" in recorder.attempts[0].error


def test_slow_answer_within_the_timeout_is_just_slow(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    inject(emulator_server, kind="slow", seconds=0.2)
    recorder = Recorder()
    client.positions(payer.address, observe=recorder)
    assert recorder.statuses == [200]


def test_dropped_connection_is_a_transport_error_then_retried(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    inject(emulator_server, kind="drop", count=3)
    recorder = Recorder()
    client.positions(payer.address, observe=recorder)
    assert recorder.statuses == [None, None, None, 200]


def test_dropped_connections_exhaust_into_api_transport_error(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    inject(emulator_server, kind="drop", count=0)
    recorder = Recorder()
    with pytest.raises(ApiTransportError):
        client.ultra_order(payer.address, SWAP_REQUEST, recorder)
    assert len(recorder.attempts) == 4


def test_malformed_json_is_garbage_and_retried(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    inject(emulator_server, kind="malformed", operation="ultra_order")
    recorder = Recorder()
    client.ultra_order(payer.address, SWAP_REQUEST, recorder)
    assert recorder.statuses == [200, 200]
    assert recorder.attempts[0].error is not None
    assert recorder.attempts[0].error.startswith("ApiGarbageError")


def test_wrong_types_until_attempts_run_out_is_api_garbage_error(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    inject(emulator_server, kind="wrong_types", count=0, operation="ultra_order")
    with pytest.raises(ApiGarbageError) as caught:
        client.ultra_order(payer.address, SWAP_REQUEST)
    assert caught.value.info.operation == "ultra_order"


def test_wrong_types_on_execute_reposts_the_same_transaction(
    emulator_server: EmulatorServer, client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    inject(emulator_server, kind="wrong_types", operation="execute_ultra")
    recorder = Recorder()
    result = swap(client, payer, recorder)
    assert result.succeeded
    assert recorder.statuses == [200, 200]
    assert emulator.ledger.summary()["landed"] == 1  # the re-post did not land again


@pytest.mark.parametrize(("code", "fresh"), [(-1000, True), (-2003, False), (6001, False),
                                             (-1002, False)])  # fmt: skip
def test_failed_execute_is_a_result_with_the_code(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet, code: int, fresh: bool
) -> None:
    inject(emulator_server, kind="failed", code=code, error="injected", operation="execute_ultra")
    recorder = Recorder()
    result = swap(client, payer, recorder)
    assert result.status == "Failed"
    assert result.code == code
    assert result.retry_with_fresh_order is fresh
    assert recorder.statuses == [200]  # an answered outcome is never retried


def test_failed_trigger_execute_is_not_retried(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    order = httpx.post(
        f"{emulator_server.url}/_emulator/trigger-orders", json={"maker": payer.address}
    ).json()["order"]
    inject(emulator_server, kind="failed", code=500, error="custom program error code: 1",
           operation="execute_trigger")  # fmt: skip
    got = client.cancel_trigger_order(payer.address, {"order": order})
    recorder = Recorder()
    result = client.execute_trigger(sign(payer, got.transaction), got.request_id, recorder)
    assert result.status == "Failed"
    assert result.error == "custom program error code: 1"
    assert recorder.statuses == [500]


def test_lost_answer_lands_then_the_repost_returns_the_first_result(
    emulator_server: EmulatorServer, client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    inject(emulator_server, kind="lost_answer", operation="execute_*")
    recorder = Recorder()
    result = swap(client, payer, recorder)
    assert result.succeeded
    assert recorder.statuses == [None, 200]
    ledger = httpx.get(f"{emulator_server.url}/_emulator/ledger").json()
    assert ledger["landed"] == 1
    assert ledger["requests"]["execute_ultra"] == 2


def test_lost_answer_then_rpc_reports_the_signature_finalized(
    emulator_server: EmulatorServer, make_client: ClientFactory, payer: Wallet
) -> None:
    client = make_client(emulator_server.url, max_attempts=1)
    inject(emulator_server, kind="lost_answer", operation="execute_ultra")
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    signed = sign(payer, quote.transaction)
    with pytest.raises(ApiTransportError):
        client.execute_ultra(signed, quote.request_id)
    from jupcron.chain.wallet import sign_transaction

    signature = sign_transaction(payer, quote.transaction).signature
    rpc = httpx.post(
        f"{emulator_server.url}/rpc",
        json={"jsonrpc": "2.0", "id": 1, "method": "getSignatureStatuses",
              "params": [[signature, "1" * 64], {"searchTransactionHistory": True}]},
    ).json()  # fmt: skip
    first, unknown = rpc["result"]["value"]
    assert first["confirmationStatus"] == "finalized"
    assert first["err"] is None
    assert unknown is None


def test_hostile_order_is_refused_by_txguard(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    thief = Pubkey.from_string("5ZWj7a1f8tWkjBESHKgrLmXshuXxqeY9SYcfbshpAqPG")
    inject(emulator_server, kind="hostile", to=str(thief), operation="ultra_order")
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    with pytest.raises(GuardRejectedError):
        check(quote.transaction, payer.pubkey, GuardPolicy())
    clean = client.ultra_order(payer.address, SWAP_REQUEST)
    assert clean.transaction is not None
    check(clean.transaction, payer.pubkey, GuardPolicy())


def test_expired_fault_answers_transaction_expired(
    emulator_server: EmulatorServer, client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    inject(emulator_server, kind="expired")
    result = swap(client, payer)
    assert result.code == -1005
    assert result.error == "Transaction expired"
    assert emulator.ledger.summary()["landed"] == 0


def test_forbidden_is_an_auth_error_without_retry(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    inject(emulator_server, kind="forbidden", operation="positions")
    recorder = Recorder()
    with pytest.raises(ApiAuthError) as caught:
        client.positions(payer.address, observe=recorder)
    assert caught.value.http_status == 403
    assert recorder.statuses == [403]


def test_execute_retries_only_by_reposting_the_same_body(
    emulator_server: EmulatorServer, client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    inject(emulator_server, kind="server_error", count=2, operation="execute_ultra")
    recorder = Recorder()
    result = swap(client, payer, recorder)
    assert result.succeeded
    assert recorder.statuses == [500, 500, 200]
    assert emulator.ledger.summary()["landed"] == 1
    assert len(emulator.ledger.issued) == 1  # no new order was asked for


def test_a_bad_fault_is_refused_by_the_control_endpoint(emulator_server: EmulatorServer) -> None:
    answer = httpx.post(f"{emulator_server.url}/_emulator/faults", json={"kind": "meteor"})
    assert answer.status_code == 400
    assert "unknown fault kind" in answer.json()["error"]
