"""Every client call against the emulator over real loopback HTTP, and the
emulator's answers to good, tampered, unsigned and wrongly signed transactions."""

from __future__ import annotations

import httpx
import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from jupcron.api.client import JupiterClient
from jupcron.chain.wallet import Wallet
from jupcron.config import ApiPaths
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from jupcron.emulator.txbuild import from_b64, to_b64
from jupcron.errors import ApiAuthError, ApiRejectedError
from tests.fixtures.emulator import (
    RECURRING_REQUEST,
    SOL,
    SWAP_REQUEST,
    USDC,
    ClientFactory,
    FakeTime,
    Recorder,
    sign,
)


@pytest.fixture
def client(emulator_server: EmulatorServer, make_client: ClientFactory) -> JupiterClient:
    return make_client(emulator_server.url)


def test_recurring_create_and_execute(
    client: JupiterClient, emulator: Emulator, payer: Wallet, recorder: Recorder
) -> None:
    order = client.create_recurring_order(payer.address, RECURRING_REQUEST, recorder)
    result = client.execute_recurring(sign(payer, order.transaction), order.request_id, recorder)
    assert result.succeeded
    assert result.order is not None
    assert result.signature is not None
    assert recorder.statuses == [200, 200]
    assert [a.operation for a in recorder.attempts] == [
        "create_recurring_order",
        "execute_recurring",
    ]
    assert emulator.ledger.recurring_orders[result.order].user == payer.address
    assert emulator.ledger.balance(payer.address, USDC) == 100_000 * 10**6 - 200_000_000


def test_price_based_recurring_is_accepted_with_a_deprecation_warning(
    client: JupiterClient, payer: Wallet
) -> None:
    from structlog.testing import capture_logs

    request = {
        "inputMint": USDC,
        "outputMint": SOL,
        "params": {"price": {"depositAmount": 200_000_000, "incrementUsdcValue": 10_000_000,
                             "interval": 86400}},
    }  # fmt: skip
    with capture_logs() as logs:
        order = client.create_recurring_order(payer.address, request)
    assert order.request_id
    assert "recurring_price_params_deprecated" in [e["event"] for e in logs]


def test_trigger_cancel_and_execute(
    emulator_server: EmulatorServer, client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    seeded = httpx.post(
        f"{emulator_server.url}/_emulator/trigger-orders",
        json={"maker": payer.address, "makingAmount": 7_000_000},
    ).json()["order"]
    before = emulator.ledger.balance(payer.address, USDC)
    order = client.cancel_trigger_order(payer.address, {"order": seeded})
    result = client.execute_trigger(sign(payer, order.transaction), order.request_id)
    assert result.succeeded
    assert result.code == 0
    assert emulator.ledger.trigger_orders[seeded].status == "Cancelled"
    assert emulator.ledger.balance(payer.address, USDC) == before + 7_000_000


def test_trigger_cancel_of_unknown_order_is_the_documented_400(
    client: JupiterClient, payer: Wallet, recorder: Recorder
) -> None:
    with pytest.raises(ApiRejectedError) as caught:
        client.cancel_trigger_order(payer.address, {"order": str(Keypair().pubkey())}, recorder)
    assert caught.value.info.http_status == 400
    assert caught.value.info.code == 400
    assert caught.value.info.error == "no matching orders found"
    assert recorder.statuses == [400]  # a 4xx is never retried


def test_ultra_order_and_execute_moves_balances(
    client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    assert quote.in_amount == "5000000"
    result = client.execute_ultra(sign(payer, quote.transaction), quote.request_id)
    assert result.succeeded
    assert result.slot is not None
    assert result.input_amount == "5000000"  # totalInputAmount: what left the wallet
    # the route's amounts: the swap events add up to inputAmountResult/outputAmountResult
    assert sum(int(e.input_amount) for e in result.swap_events) == int(result.input_amount_result)
    assert sum(int(e.output_amount) for e in result.swap_events) == int(result.output_amount_result)
    assert all(e.amm for e in result.swap_events)
    assert int(result.input_amount_result or 0) < 5_000_000  # the fee was taken from the input
    assert result.output_amount == quote.out_amount
    assert emulator.ledger.balance(payer.address, SOL) == 100 * 10**9 + int(quote.out_amount)


def test_ultra_order_without_funds_is_skipped_not_signed(
    client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    emulator.ledger.set_balance(payer.address, USDC, 1)
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.skipped
    assert quote.transaction == ""  # null only without a taker (openapi-spec/ultra/ultra.yaml)
    assert quote.error_code == 1


def test_positions_grouped_by_platform_and_filtered(
    emulator_server: EmulatorServer, client: JupiterClient, payer: Wallet
) -> None:
    httpx.post(f"{emulator_server.url}/_emulator/trigger-orders", json={"maker": payer.address})
    everything = client.positions(payer.address)
    assert set(everything.by_platform()) == {"wallet-tokens", "jupiter-exchange"}
    only = client.positions(payer.address, ["jupiter-exchange"])
    assert set(only.by_platform()) == {"jupiter-exchange"}
    assert only.elements[0].label == "LimitOrder"
    assert only.raw["owner"] == payer.address


def test_reposting_the_same_signed_transaction_returns_the_first_result(
    client: JupiterClient, emulator: Emulator, payer: Wallet
) -> None:
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    signed = sign(payer, quote.transaction)
    first = client.execute_ultra(signed, quote.request_id)
    again = client.execute_ultra(signed, quote.request_id)
    assert again.signature == first.signature
    assert again.slot == first.slot
    assert emulator.ledger.summary()["landed"] == 1


def test_recurring_below_minimum_is_rejected_with_the_api_text(
    client: JupiterClient, payer: Wallet
) -> None:
    small = {**RECURRING_REQUEST, "params": {"time": {"inAmount": 2_990_000, "numberOfOrders": 2,
                                                      "interval": 86400}}}  # fmt: skip
    with pytest.raises(ApiRejectedError) as caught:
        client.create_recurring_order(payer.address, small)
    assert caught.value.info.error == "Order is valued at 2.99 USDC, minimum is 100.00 USDC"
    assert caught.value.info.body is not None


def test_a_bad_request_is_refused_before_any_http(client: JupiterClient, payer: Wallet) -> None:
    recorder = Recorder()
    with pytest.raises(ApiRejectedError, match=r"numberOfOrders|number_of_orders"):
        client.create_recurring_order(
            payer.address,
            {
                **RECURRING_REQUEST,
                "params": {"time": {"inAmount": 1, "numberOfOrders": 1, "interval": 60}},
            },
            recorder,
        )
    assert recorder.attempts == []


def _tamper(tx_b64: str) -> str:
    """The same transaction with another blockhash: a modified message."""
    msg = from_b64(tx_b64).message
    changed = MessageV0(
        msg.header, msg.account_keys, Hash.new_unique(), msg.instructions,
        msg.address_table_lookups,
    )  # fmt: skip
    return to_b64(VersionedTransaction.populate(changed, [Signature.default()]))


def _signed_by(keypair: Keypair, tx_b64: str) -> str:
    tx = from_b64(tx_b64)
    return to_b64(VersionedTransaction.populate(tx.message, [keypair.sign_message(
        bytes([0x80]) + bytes(tx.message))]))  # fmt: skip


@pytest.mark.parametrize(
    ("variant", "ultra_code"),
    [("ours", 0), ("unsigned", -2), ("wrong_key", -2), ("tampered", -3)],
)
def test_ultra_execute_checks_the_transaction(
    client: JupiterClient, emulator: Emulator, payer: Wallet, variant: str, ultra_code: int
) -> None:
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    tx = {
        "ours": lambda t: sign(payer, t),
        "unsigned": lambda t: t,
        "wrong_key": lambda t: _signed_by(Keypair(), t),
        "tampered": lambda t: sign(payer, _tamper(t)),
    }[variant](quote.transaction)
    result = client.execute_ultra(tx, quote.request_id)
    assert result.code == ultra_code
    assert result.succeeded is (variant == "ours")
    assert emulator.ledger.summary()["landed"] == (1 if variant == "ours" else 0)


@pytest.mark.parametrize("variant", ["unsigned", "wrong_key", "tampered"])
def test_recurring_execute_refuses_bad_transactions_with_the_400_envelope(
    client: JupiterClient, emulator: Emulator, payer: Wallet, variant: str
) -> None:
    order = client.create_recurring_order(payer.address, RECURRING_REQUEST)
    tx = {
        "unsigned": order.transaction,
        "wrong_key": _signed_by(Keypair(), order.transaction),
        "tampered": sign(payer, _tamper(order.transaction)),
    }[variant]
    result = client.execute_recurring(tx, order.request_id)
    assert result.status == "Failed"
    assert result.http_status == 400
    expected = "Invalid message bytes" if variant == "tampered" else "Invalid signed transaction"
    assert result.error == expected
    assert emulator.ledger.recurring_orders == {}


def test_unknown_request_id(client: JupiterClient, payer: Wallet) -> None:
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    signed = sign(payer, quote.transaction)
    ultra = client.execute_ultra(signed, "not-a-request")
    assert ultra.status is None
    assert ultra.code == -1
    assert ultra.retry_with_fresh_order
    recurring = client.execute_recurring(signed, "not-a-request")
    assert recurring.status == "Failed"
    assert recurring.http_status == 400


def test_expired_blockhash_and_expired_request(
    make_client: ClientFactory, fake_time: FakeTime, payer: Wallet
) -> None:
    emu = Emulator(seed=1, clock=fake_time.wall, blockhash_ttl=90, request_ttl=120)
    with EmulatorServer().start(emu) as server:
        client = make_client(server.url)
        quote = client.ultra_order(payer.address, SWAP_REQUEST)
        assert quote.transaction is not None
        fake_time.now += 91
        expired = client.execute_ultra(sign(payer, quote.transaction), quote.request_id)
        assert expired.code == -1005
        assert expired.status == "Failed"
        assert not expired.retry_with_fresh_order
        fake_time.now += 30
        gone = client.execute_ultra(sign(payer, quote.transaction), quote.request_id)
        assert gone.code == -1
        assert emu.ledger.summary()["landed"] == 0


def test_api_key_is_sent_and_enforced(make_client: ClientFactory, payer: Wallet) -> None:
    emu = Emulator(api_key="right-key")
    with EmulatorServer().start(emu) as server:
        ok = make_client(server.url, api_key="right-key")
        assert ok.positions(payer.address).owner == payer.address
        for key in ("wrong-key", None):
            recorder = Recorder()
            with pytest.raises(ApiAuthError) as caught:
                make_client(server.url, api_key=key).positions(payer.address, observe=recorder)
            assert caught.value.http_status == 401
            assert recorder.statuses == [401]  # never retried


def test_swap_paths_can_point_at_swap_v2(
    emulator_server: EmulatorServer, make_client: ClientFactory, emulator: Emulator, payer: Wallet
) -> None:
    client = make_client(emulator_server.url, paths=ApiPaths(ultra="/swap/v2"))
    quote = client.ultra_order(payer.address, SWAP_REQUEST)
    assert quote.transaction is not None
    assert client.execute_ultra(sign(payer, quote.transaction), quote.request_id).succeeded
    # the old way to reach Swap V2 still works; the emulator counts /swap/v2 as Swap V2's own
    assert emulator.ledger.requests["execute_swap"] == 1


def test_client_adapts_to_ratelimit_headers_before_a_429(payer: Wallet) -> None:
    emu = Emulator(rate_limit=3, rate_window=1.0)
    with EmulatorServer().start(emu) as server:
        recorder = Recorder()
        with JupiterClient(server.url, api_key=None, rate_limit=50) as client:
            for _ in range(5):
                client.positions(payer.address, observe=recorder)
    assert recorder.statuses == [200] * 5
    # remaining hit 0 on the third answer: the fourth call waited for x-ratelimit-reset
    assert recorder.attempts[3].waited > 0.2


def test_emulator_429_is_waited_out_and_retried(payer: Wallet) -> None:
    emu = Emulator(rate_limit=3, rate_window=1.0)
    with EmulatorServer().start(emu) as server:
        with JupiterClient(server.url, api_key=None, rate_limit=50) as other:
            for _ in range(3):
                other.positions(payer.address)  # another client uses up the window
        recorder = Recorder()
        with JupiterClient(server.url, api_key=None, rate_limit=50, max_attempts=4) as client:
            client.positions(payer.address, observe=recorder)
    assert recorder.statuses[0] == 429
    assert recorder.statuses[-1] == 200
    assert recorder.attempts[1].waited > 0.2
