"""Signing: only our slot among the required signers, every other byte kept."""

from __future__ import annotations

import base64

import pytest
from solders.hash import Hash
from solders.instruction import CompiledInstruction
from solders.keypair import Keypair
from solders.message import MessageHeader, MessageV0, to_bytes_versioned
from solders.signature import Signature
from solders.transaction import VersionedTransaction
from structlog.testing import capture_logs

from jupcron.chain.wallet import SigningError, Unsigned, Wallet, read_transaction, sign_transaction
from jupcron.errors import RejectedError
from tests.fixtures.wallet import AGGREGATOR, build, jupiter_swap, program_call, to_b64


def _decode(b64: str) -> VersionedTransaction:
    return VersionedTransaction.from_bytes(base64.b64decode(b64))


def test_signs_the_fee_payer_slot_and_keeps_the_message(wallet: Wallet) -> None:
    unsigned = jupiter_swap(wallet.pubkey)
    with capture_logs() as logs:
        signed = sign_transaction(wallet, unsigned)
    tx = _decode(signed.b64)
    before = _decode(unsigned)
    assert to_bytes_versioned(tx.message) == to_bytes_versioned(before.message)
    message = to_bytes_versioned(tx.message)
    assert tx.signatures[0].verify(wallet.pubkey, message)
    assert str(tx.signatures[0]) == signed.signature
    assert tx.verify_with_results() == [True]
    assert [e["event"] for e in logs] == ["tx_signed"]
    assert signed.b64 not in repr(logs)
    assert signed.b64 not in repr(signed)


def _two_signers(first: Keypair, second: Wallet) -> tuple[str, MessageV0]:
    """A message both `first` (fee payer) and our wallet must sign."""
    call = program_call(AGGREGATOR, second.pubkey, first.pubkey())
    b64 = build(first.pubkey(), [call])
    message = _decode(b64).message
    assert isinstance(message, MessageV0)
    return b64, message


def test_signs_only_our_slot_and_keeps_another_signature(wallet: Wallet) -> None:
    other = Keypair()
    _b64, message = _two_signers(other, wallet)
    keys = list(message.account_keys)
    assert message.header.num_required_signatures == 2
    their_slot = keys.index(other.pubkey())
    our_slot = keys.index(wallet.pubkey)
    # the other party signed first (as Jupiter does for RFQ at execute)
    sigs = [Signature.default(), Signature.default()]
    sigs[their_slot] = other.sign_message(to_bytes_versioned(message))
    partly = to_b64(VersionedTransaction.populate(message, sigs))

    signed = _decode(sign_transaction(wallet, partly).b64)

    assert signed.signatures[their_slot] == sigs[their_slot]
    assert signed.verify_with_results() == [True, True]
    assert str(signed.signatures[our_slot]) == sign_transaction(wallet, partly).signature


def test_leaves_an_empty_foreign_slot_empty(wallet: Wallet) -> None:
    other = Keypair()
    b64, message = _two_signers(other, wallet)
    signed = _decode(sign_transaction(wallet, b64).b64)
    their_slot = list(message.account_keys).index(other.pubkey())
    assert signed.signatures[their_slot] == Signature.default()


def test_refuses_when_our_wallet_is_not_a_signer(wallet: Wallet) -> None:
    stranger = Wallet.generate()
    with pytest.raises(SigningError, match="is not a required signer"):
        sign_transaction(wallet, jupiter_swap(stranger.pubkey))


def test_refuses_an_unsanitizable_message(wallet: Wallet) -> None:
    bad_ix = CompiledInstruction(program_id_index=7, data=b"", accounts=bytes([0, 9]))
    message = MessageV0(MessageHeader(1, 0, 0), [wallet.pubkey], Hash.default(), [bad_ix], [])
    b64 = to_b64(VersionedTransaction.populate(message, [Signature.default()]))
    with capture_logs() as logs, pytest.raises(SigningError, match="not valid") as err:
        sign_transaction(wallet, b64)
    assert isinstance(err.value, RejectedError)
    assert logs == []


@pytest.mark.parametrize("text", ["", "not base64!", base64.b64encode(b"garbage").decode()])
def test_refuses_what_is_not_a_transaction(wallet: Wallet, text: str) -> None:
    with pytest.raises(SigningError):
        sign_transaction(wallet, text)


def test_a_transaction_read_once_is_signed_as_its_text_would_be(wallet: Wallet) -> None:
    unsigned = jupiter_swap(wallet.pubkey)
    read = read_transaction(unsigned)
    assert (read.b64, read.raw) == (unsigned, base64.b64decode(unsigned))
    from_text, from_read = sign_transaction(wallet, unsigned), sign_transaction(wallet, read)
    assert (from_read.b64, from_read.signature) == (from_text.b64, from_text.signature)


def test_a_read_transaction_whose_bytes_are_not_its_decoding_is_refused(wallet: Wallet) -> None:
    """However an `Unsigned` was made, the bytes signed are those of the transaction it
    holds (the one txguard judged): one whose bytes are another's is not signed."""
    judged, other = read_transaction(jupiter_swap(wallet.pubkey)), jupiter_swap(wallet.pubkey)
    forged = Unsigned(other, base64.b64decode(other), judged.tx)
    with capture_logs() as logs, pytest.raises(SigningError, match="not their decoded"):
        sign_transaction(wallet, forged)
    assert logs == []
