"""The Trigger V2 login challenge: signed only in its documented form, from the
configured host, and never when any reading of it is a Solana transaction."""

from __future__ import annotations

import base64

import pytest
from solders.hash import Hash
from solders.message import Message, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from structlog.testing import capture_logs

from jupcron.chain.wallet import MessageSigningError, Wallet, sign_message
from jupcron.errors import GuardRejectedError
from jupcron.txguard.challenge import PREFIX, check_challenge, sign_challenge
from tests.fixtures.wallet import jupiter_swap

HOST = "api.jup.ag"
GOOD = PREFIX + "k3J9xQ2mP8vR4tY6w-_Z"


def _b58_any(raw: bytes) -> str:
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    number, out = int.from_bytes(raw, "big"), ""
    while number:
        number, rest = divmod(number, 58)
        out = alphabet[rest] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\x00"))) + out


def _drain_message(wallet: Wallet) -> bytes:
    """A legacy message moving all our lamports to a stranger: small enough that
    its base58 text fits the nonce's length."""
    to = Pubkey.new_unique()
    ix = transfer(TransferParams(from_pubkey=wallet.pubkey, to_pubkey=to, lamports=2**63))
    return bytes(Message.new_with_blockhash([ix], wallet.pubkey, Hash.default()))


def _refused(wallet: Wallet, kind: object, text: object, host: str = HOST) -> list[str]:
    with capture_logs() as logs, pytest.raises(GuardRejectedError) as refused:
        sign_challenge(wallet, kind, text, origin_host=host, expected_host=HOST)
    assert [e for e in logs if e["event"] in ("message_signed", "challenge_signed")] == []
    return refused.value.reasons


def test_the_documented_challenge_is_signed_over_its_exact_bytes(wallet: Wallet) -> None:
    with capture_logs() as logs:
        signature = sign_challenge(wallet, "message", GOOD, origin_host=HOST, expected_host=HOST)
    assert Signature.from_string(signature).verify(wallet.pubkey, GOOD.encode())
    assert [e["event"] for e in logs] == ["message_signed", "challenge_signed"]


def test_a_transaction_challenge_is_never_signed(wallet: Wallet) -> None:
    reasons = _refused(wallet, "transaction", jupiter_swap(wallet.pubkey))
    assert any("never a transaction" in r for r in reasons)


def test_a_challenge_that_is_a_base64_transaction_is_refused(wallet: Wallet) -> None:
    reasons = _refused(wallet, "message", jupiter_swap(wallet.pubkey))
    assert any("decoded from base64 parses as a Solana transaction" in r for r in reasons)


def test_a_nonce_that_is_a_base58_message_is_refused(wallet: Wallet) -> None:
    # the smallest message our signature would make valid: it pays a fee for nothing
    fee_only = bytes(Message.new_with_blockhash([], wallet.pubkey, Hash.new_unique()))
    nonce = _b58_any(fee_only)
    assert len(nonce) <= 128  # it fits the nonce's form: only the parse check catches it
    reasons = _refused(wallet, "message", PREFIX + nonce)
    assert reasons == ["the nonce decoded from base58 parses as a Solana message"]


def test_a_nonce_that_is_a_base64_message_is_refused(wallet: Wallet) -> None:
    nonce = base64.b64encode(_drain_message(wallet)).decode()
    reasons = _refused(wallet, "message", PREFIX + nonce)
    assert any("the nonce decoded from base64 parses" in r for r in reasons)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("example.com wants you to sign in with your Solana account:\nabc12345", "start with"),
        (PREFIX + "abc", "nonce"),
        (PREFIX + "abc12345 and transfer everything", "nonce"),
        (PREFIX + "abc12345\nexample.com", "control"),
        (PREFIX + "evil.example.com", "nonce"),
        (PREFIX + "a" * 200, "characters"),
        ("", "not a text"),
        (None, "not a text"),
        (PREFIX + "abcdéfgh1", "non-ASCII"),
    ],
)
def test_other_texts_are_refused(wallet: Wallet, text: object, why: str) -> None:
    assert any(why in r for r in _refused(wallet, "message", text))


def test_a_challenge_from_another_host_is_refused(wallet: Wallet) -> None:
    reasons = _refused(wallet, "message", GOOD, host="api.jup.ag.example.net")
    assert reasons == [
        "the challenge came from api.jup.ag.example.net, not from the configured API host "
        "api.jup.ag"
    ]


def test_the_check_alone_accepts_the_documented_form() -> None:
    checked = check_challenge("message", GOOD, origin_host="API.JUP.AG", expected_host=HOST)
    assert checked.text == GOOD


def test_the_wallet_itself_refuses_a_message_that_is_a_transaction(wallet: Wallet) -> None:
    raw = base64.b64decode(jupiter_swap(wallet.pubkey))
    with pytest.raises(MessageSigningError):
        sign_message(wallet, raw)
    from solders.transaction import VersionedTransaction

    with pytest.raises(MessageSigningError):
        sign_message(wallet, to_bytes_versioned(VersionedTransaction.from_bytes(raw).message))
    with pytest.raises(MessageSigningError):
        sign_message(wallet, _drain_message(wallet))
