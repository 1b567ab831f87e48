"""The emulator's normal transactions, for all three kinds, pass txguard and are
signed so that the emulator's execute (which checks the signature against the
transaction it issued) accepts them. In process: `Emulator.handle`, no sockets."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

import pytest
from solders.keypair import Keypair
from solders.transaction import VersionedTransaction

from jupcron.chain.wallet import Wallet
from jupcron.emulator import jupiter_ix as jup
from jupcron.emulator.core import Emulator
from jupcron.emulator.txbuild import build_unsigned, fee_payer_signature_ok, to_b64
from jupcron.errors import GuardRejectedError
from jupcron.txguard import GuardPolicy, check_and_sign, inspect

POLICY = GuardPolicy()
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
WSOL = "So11111111111111111111111111111111111111112"


def _call(emulator: Emulator, method: str, path: str, body: Any = None, **query: str) -> Any:
    raw = json.dumps(body).encode() if body is not None else b""
    answer = emulator.handle(method, path, query, {"content-type": "application/json"}, raw)
    assert 200 <= answer.status < 300, (answer.status, answer.body)
    return json.loads(answer.body)


def _order(emulator: Emulator, kind: str, owner: str) -> dict[str, Any]:
    if kind == "recurring":
        body = {
            "user": owner,
            "inputMint": USDC,
            "outputMint": WSOL,
            "params": {"time": {"inAmount": 200_000_000, "numberOfOrders": 2, "interval": 86400}},
        }
        return dict(_call(emulator, "POST", "/recurring/v1/createOrder", body))
    if kind == "trigger-cancel":
        seeded = _call(emulator, "POST", "/_emulator/trigger-orders", {"maker": owner})
        body = {"maker": owner, "order": seeded["order"], "computeUnitPrice": "auto"}
        return dict(_call(emulator, "POST", "/trigger/v1/cancelOrder", body))
    query = {"inputMint": USDC, "outputMint": WSOL, "amount": "1000000", "taker": owner}
    return dict(_call(emulator, "GET", "/ultra/v1/order", **query))


EXECUTE = {
    "recurring": "/recurring/v1/execute",
    "trigger-cancel": "/trigger/v1/execute",
    "swap": "/ultra/v1/execute",
}


@pytest.mark.parametrize("kind", ["recurring", "trigger-cancel", "swap"])
def test_emulator_orders_are_accepted_signed_and_executed(kind: str) -> None:
    emulator = Emulator(seed=7)
    wallet = Wallet.generate()
    order = _order(emulator, kind, wallet.address)
    verdict = inspect(order["transaction"], wallet.pubkey, POLICY)
    assert verdict.reasons == ()
    signed = check_and_sign(wallet, order["transaction"], POLICY)
    tx = VersionedTransaction.from_bytes(base64.b64decode(signed.b64))
    assert fee_payer_signature_ok(tx, wallet.pubkey)
    body = {"signedTransaction": signed.b64, "requestId": order["requestId"]}
    result = _call(emulator, "POST", EXECUTE[kind], body)
    assert result["status"] == "Success", result
    assert result["signature"] == signed.signature


@pytest.mark.parametrize("kind", ["recurring", "trigger_cancel", "swap"])
def test_build_unsigned_kinds_are_accepted(kind: str) -> None:
    wallet = Wallet.generate()
    tx = to_b64(build_unsigned(kind, wallet.pubkey, rng=random.Random(1)))
    assert inspect(tx, wallet.pubkey, POLICY).accepted
    signed = check_and_sign(wallet, tx, POLICY)
    decoded = VersionedTransaction.from_bytes(base64.b64decode(signed.b64))
    assert fee_payer_signature_ok(decoded, wallet.pubkey)


def test_a_price_based_recurring_order_is_refused_its_program_cannot_be_read() -> None:
    """Value Average has no public interface: what it would be told cannot be
    checked, so nothing is signed (docs/txguard.md)."""
    wallet = Wallet.generate()
    tx = to_b64(build_unsigned("recurring_price", wallet.pubkey, rng=random.Random(1)))
    (reason,) = inspect(tx, wallet.pubkey, POLICY).reasons
    assert "Value Average" in reason
    assert "cannot be decoded" in reason


@pytest.mark.parametrize("kind", ["recurring", "trigger_cancel", "swap"])
def test_build_unsigned_with_a_drain_is_refused(kind: str) -> None:
    wallet = Wallet.generate()
    thief = Keypair().pubkey()
    tx = to_b64(build_unsigned(kind, wallet.pubkey, hostile_to=thief))
    with pytest.raises(GuardRejectedError) as err:
        check_and_sign(wallet, tx, POLICY)
    assert str(thief) in str(err.value)


def test_an_emulator_transaction_for_someone_else_is_refused() -> None:
    emulator = Emulator(seed=3)
    ours, theirs = Wallet.generate(), Wallet.generate()
    order = _order(emulator, "swap", theirs.address)
    reasons = inspect(order["transaction"], ours.pubkey, POLICY).reasons
    assert any("the fee payer is" in r for r in reasons)
    assert any("is not a required signer" in r for r in reasons)


def test_the_emulators_value_average_deposit_is_laid_out_as_the_docs_example() -> None:
    """Anchor's ``deposit`` discriminator, one u64, and the account order of the docs'
    genuine priceDeposit transaction (tests/fixtures/real/recurring-price-deposit.json),
    rebuilt here for the same wallet, order and mint: identical bytes and accounts."""
    real = json.loads(
        (Path(__file__).parents[1] / "fixtures/real/recurring-price-deposit.json").read_text()
    )
    message = VersionedTransaction.from_bytes(base64.b64decode(real["transaction"])).message
    keys = message.account_keys
    (documented,) = [
        ix for ix in message.instructions if keys[ix.program_id_index] == jup.VA_PROGRAM
    ]
    user, order, mint = (keys[documented.accounts[i]] for i in (0, 1, 2))
    amount = int.from_bytes(bytes(documented.data)[8:16], "little")
    ours = jup.va_deposit(user, order, mint, amount)
    assert bytes(ours.data) == bytes(documented.data)
    assert bytes(ours.data)[:8] == jup.discriminator("deposit")
    assert [m.pubkey for m in ours.accounts] == [keys[i] for i in documented.accounts]
    built = build_unsigned("recurring_price", user, rng=random.Random(1), amount=amount)
    (va,) = [ix for ix in built.message.instructions
             if built.message.account_keys[ix.program_id_index] == jup.VA_PROGRAM]  # fmt: skip
    assert bytes(va.data)[:8] == jup.discriminator("deposit")
