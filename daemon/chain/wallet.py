"""The wallet: loading the keypair file, writing a new one, signing our slot.

The keypair file is the Solana CLI format: a JSON array of 64 integers (the
32-byte ed25519 seed, then the 32-byte public key). It comes from
``wallet.keypair`` in the config, else from the systemd credentials directory
(``$CREDENTIALS_DIRECTORY/keypair``). Like ssh with private keys, a file that
group or others may access, or that another user owns, is refused
(`jupcron.private.read_private`, which the API key file goes through too).

The secret never leaves this module: `Wallet` prints as its address only, and
no error or log line quotes the file's content.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import structlog
from solders.keypair import Keypair
from solders.message import Message, MessageV0, from_bytes_versioned, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import SanitizeError, Transaction, VersionedTransaction

from jupcron.errors import KeypairError, RejectedError
from jupcron.private import create_private_whole, no_core_dumps, read_private

log = structlog.get_logger(__name__)

CREDENTIAL_NAME = "keypair"
SIGNATURE_LEN = 64


class Wallet:
    """Our keypair. Prints, compares and hashes by its public key only."""

    __slots__ = ("_keypair", "address", "pubkey")

    def __init__(self, keypair: Keypair) -> None:
        self._keypair = keypair
        self.pubkey: Pubkey = keypair.pubkey()
        self.address: str = str(self.pubkey)

    @classmethod
    def generate(cls) -> Wallet:
        return cls(Keypair())

    def sign(self, message: bytes) -> bytes:
        """The 64-byte ed25519 signature of ``message``."""
        return bytes(self._keypair.sign_message(message))

    def __repr__(self) -> str:
        return f"Wallet(address={self.address!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Wallet) and other.pubkey == self.pubkey

    def __hash__(self) -> int:
        return hash(self.pubkey)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Wallet cannot be pickled (it holds a secret key)")


def keypair_path(path: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """``path`` (from ``wallet.keypair``), else ``$CREDENTIALS_DIRECTORY/keypair``."""
    if path is not None:
        return Path(path)
    env = os.environ if env is None else env
    creds = env.get("CREDENTIALS_DIRECTORY")
    if creds:
        return Path(creds) / CREDENTIAL_NAME
    raise KeypairError(
        "no keypair configured: set wallet.keypair in the config "
        "or pass it as the systemd credential 'keypair' "
        "(make a new one with: jupcron wallet new PATH)"
    )


def load_wallet(path: Path | None, env: Mapping[str, str] | None = None) -> Wallet:
    """Load and check the keypair file; every problem is one line naming the file."""
    file = keypair_path(path, env)
    if path is None:
        missing = "the systemd credential 'keypair' is missing (check LoadCredential= in the unit)"
    else:
        missing = f"keypair file not found (make a new one with: jupcron wallet new {file})"
    raw = read_private(file, "keypair", KeypairError, env, missing=missing)
    return Wallet(_parse(file, raw))


def _parse(file: Path, raw: bytes) -> Keypair:
    def fail(problem: str) -> NoReturn:
        raise KeypairError(f"{file}: not a Solana keypair file: {problem}")

    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        fail("not UTF-8 text")
    except json.JSONDecodeError as exc:
        # position only: the message of a JSON error could quote the secret
        fail(f"malformed JSON at line {exc.lineno} column {exc.colno}")
    except (ValueError, RecursionError):  # a number too long for `int`, arrays too deep
        fail("JSON the decoder cannot take (a number of thousands of digits, or arrays "
             "nested thousands deep)")  # fmt: skip
    if not isinstance(data, list):
        fail("expected a JSON array of 64 integers")
    if len(data) != 2 * 32:
        fail(f"expected a JSON array of 64 integers, found {len(data)} items")
    for position, value in enumerate(data, start=1):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
            fail(f"item {position} is not an integer from 0 to 255")
    secret = bytes(data)
    keypair = Keypair.from_seed(secret[:32])
    if bytes(keypair.pubkey()) != secret[32:]:
        fail("the public key (last 32 numbers) does not match the secret key")
    return keypair


def write_keypair_file(path: Path, wallet: Wallet | None = None) -> Wallet:
    """Write ``wallet`` (default: a new one) with mode 0600; never overwrite a file.

    The caller prints the address next, and the operator funds it: the file is on
    disk whole (fsynced, folder too) before this returns, and a crash while writing
    leaves nothing at ``path`` (`create_private_whole`). Like reading one, holding a
    secret key turns core dumps off first (`no_core_dumps`)."""
    no_core_dumps()
    wallet = wallet or Wallet.generate()
    path = Path(path)
    if os.path.lexists(path):  # before the key is written anywhere
        raise KeypairError(f"{path}: already exists; refusing to overwrite it")
    data = (json.dumps(list(bytes(wallet._keypair))) + "\n").encode("ascii")
    try:
        create_private_whole(path, data)
    except FileExistsError:
        raise KeypairError(f"{path}: already exists; refusing to overwrite it") from None
    except OSError as exc:
        raise KeypairError(f"{path}: cannot create the keypair file: {exc.strerror}") from None
    return wallet


@dataclass(frozen=True)
class SignedTransaction:
    """A transaction with our signature in place, ready for execute."""

    b64: str
    signature: str  # base58, our slot's signature (the transaction id if we pay fees)

    def __repr__(self) -> str:  # the signed transaction itself is never printed
        return f"SignedTransaction(signature={self.signature!r})"


class SigningError(RejectedError):
    """The transaction cannot be signed by this wallet."""


def _shortvec(raw: bytes) -> tuple[int, int]:
    """Decode Solana's compact-u16 at the start of ``raw``: (value, bytes used)."""
    value = 0
    for i in range(3):
        if i >= len(raw):
            break
        byte = raw[i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value, i + 1
    raise ValueError("bad compact-u16")


@dataclass(frozen=True)
class Unsigned:
    """A transaction as received: its base64 text, its bytes and their decoding (made
    once by `read_transaction`; txguard judges it and `sign_transaction` signs it, so
    the bytes signed are the bytes judged)."""

    b64: str
    raw: bytes
    tx: VersionedTransaction = field(compare=False)

    def __repr__(self) -> str:
        return f"Unsigned({len(self.raw)} bytes)"


def read_transaction(tx_b64: str) -> Unsigned:
    """Base64 text -> the transaction it holds; ValueError when it is not one."""
    try:
        raw = base64.b64decode(tx_b64.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not valid base64") from None
    if not raw:
        raise ValueError("empty input")
    try:
        tx = VersionedTransaction.from_bytes(raw)
    except ValueError:
        raise ValueError("the bytes do not decode as a Solana transaction") from None
    if bytes(tx) != raw:
        raise ValueError("trailing or non-canonical bytes after the transaction")
    return Unsigned(tx_b64, raw, tx)


def sign_transaction(wallet: Wallet, transaction: str | Unsigned) -> SignedTransaction:
    """Sign only our slot among the required signers; keep every other byte.

    `transaction`: base64 text, or as txguard read and judged it (`Unsigned`, not
    decoded again). The message is never re-encoded: our 64 signature bytes are put in
    place in the bytes we received. Refuses a message that fails to sanitize, one whose
    bytes are not its decoding's, or one where our wallet is not a required signer.
    """
    try:
        if isinstance(transaction, str):
            transaction = read_transaction(transaction)
        elif bytes(transaction.tx) != transaction.raw:  # as read_transaction checks
            raise ValueError("the bytes are not their decoded transaction's")
        tx, raw = transaction.tx, transaction.raw
        tx.sanitize()
    except (ValueError, SanitizeError) as exc:
        raise SigningError(f"cannot sign: the transaction is not valid ({exc})") from None
    message = tx.message
    required = message.header.num_required_signatures
    keys = list(message.account_keys)[:required]
    if wallet.pubkey not in keys:
        raise SigningError(f"cannot sign: {wallet.address} is not a required signer")
    slot = keys.index(wallet.pubkey)
    count, start = _shortvec(raw)
    if count != required:
        raise SigningError("cannot sign: signature count does not match the message header")
    body = raw[start + SIGNATURE_LEN * count :]
    if body != to_bytes_versioned(message):
        raise SigningError("cannot sign: the message bytes are not canonical")
    signature = wallet.sign(body)
    at = start + SIGNATURE_LEN * slot
    signed = raw[:at] + signature + raw[at + SIGNATURE_LEN :]
    sig58 = str(Signature.from_bytes(signature))  # the bytes just put in our slot
    log.info("tx_signed", signature=sig58, slot=slot, signers=required)
    return SignedTransaction(b64=base64.b64encode(signed).decode("ascii"), signature=sig58)


# what a signature over these bytes could authorise on-chain, were they a transaction
_TRANSACTION_FORMS = (
    ("transaction", VersionedTransaction.from_bytes),
    ("legacy transaction", Transaction.from_bytes),
    ("message", from_bytes_versioned),
    ("legacy message", Message.from_bytes),
    ("v0 message", MessageV0.from_bytes),
)


def parses_as_transaction(raw: bytes) -> str | None:
    """What Solana form `raw` parses as (a transaction or a message), or None."""
    for name, parse in _TRANSACTION_FORMS:
        try:
            parse(raw)
        except Exception:  # noqa: BLE001, S112  # solders raises its own error types: not one
            continue
        return name
    return None


class MessageSigningError(RejectedError):
    """The wallet refuses to sign this message."""


def sign_message(wallet: Wallet, message: bytes) -> bytes:
    """The wallet's signature over an off-chain message (a login challenge).

    Only txguard's checked path calls this (`jupcron.txguard.challenge`, enforced
    by tests/unit/test_no_unguarded_signing.py). As a last line, bytes that parse
    as a Solana transaction or message are refused here too: a signature over
    them could authorise that transaction."""
    form = parses_as_transaction(message)
    if form is not None:
        raise MessageSigningError(f"refusing to sign a message that parses as a Solana {form}")
    signature = wallet.sign(message)
    log.info("message_signed", size=len(message))
    return signature
