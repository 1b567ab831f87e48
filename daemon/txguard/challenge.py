"""The Trigger V2 login challenge, checked before the wallet signs it.

Signing a message is a new attack surface: whoever chooses the bytes chooses
what our signature authorises. So the wallet signs a login challenge only
through `sign_challenge`, which first holds it to everything we know
(docs/products.md, "Authentication"):

- it is a ``message`` challenge (jupcron never signs a login *transaction*);
- it came from the configured API host, over the client's own connection;
- it is exactly the documented text: ``Sign this message to authenticate with
  Jupiter Trigger Order API: `` then a nonce of 8-128 characters from
  ``A-Za-z0-9+/=_-`` (no spaces, dots or colons: no domain, no second statement);
- neither its bytes, nor the nonce's, nor either decoded from base64 or
  base58, parse as a Solana transaction or message.

Anything else is refused with the reasons (`GuardRejectedError`), and nothing
is signed. The docs show only the prefix and ``abc123...`` as the nonce: a
real challenge of another form is refused, never guessed at.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from solders.signature import Signature

from jupcron.chain.wallet import Wallet, parses_as_transaction, sign_message
from jupcron.errors import GuardRejectedError

log = structlog.get_logger(__name__)

PREFIX = "Sign this message to authenticate with Jupiter Trigger Order API: "
NONCE = re.compile(r"[A-Za-z0-9+/=_-]{8,128}")
MAX_CHALLENGE = len(PREFIX) + 128
_B58 = re.compile(r"[1-9A-HJ-NP-Za-km-z]+")
_B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


@dataclass(frozen=True)
class CheckedChallenge:
    """A challenge txguard accepted: the exact text to sign, and where it came from."""

    text: str
    host: str


def _b58decode(text: str) -> bytes | None:
    if not text or not _B58.fullmatch(text) or len(text) > 2048:
        return None
    number = 0
    for char in text:
        number = number * 58 + _B58_ALPHABET.index(char)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\x00" * (len(text) - len(text.lstrip("1"))) + body


def _b64decode(text: str) -> bytes | None:
    padded = text + "=" * (-len(text) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            return decode(padded.encode("ascii"))
        except (binascii.Error, ValueError, UnicodeEncodeError):
            continue
    return None


def transaction_forms(text: str) -> list[str]:
    """Each reading of `text` that parses as a Solana transaction or message."""
    nonce = text.removeprefix(PREFIX)
    readings: list[tuple[str, bytes | None]] = [
        ("the challenge as signed", text.encode("utf-8", "replace"))
    ]
    for part, value in (("the challenge", text), ("the nonce", nonce)):
        readings.append((f"{part} decoded from base64", _b64decode(value)))
        readings.append((f"{part} decoded from base58", _b58decode(value)))
    found = []
    for how, raw in readings:
        if raw and (form := parses_as_transaction(raw)) is not None:
            found.append(f"{how} parses as a Solana {form}")
    return found


def check_challenge(
    challenge_type: object, challenge: object, *, origin_host: str, expected_host: str
) -> CheckedChallenge:
    """The challenge, if it may be signed; `GuardRejectedError` with every reason if not."""
    reasons: list[str] = []
    if challenge_type != "message":
        reasons.append(
            f"the API answered a challenge of type {challenge_type!r}: jupcron asks for and "
            "signs only a 'message' challenge, never a transaction"
        )
    if origin_host.lower() != expected_host.lower():
        reasons.append(
            f"the challenge came from {origin_host}, not from the configured API host "
            f"{expected_host}"
        )
    if not isinstance(challenge, str) or not challenge:
        reasons.append("the challenge is not a text")
        raise GuardRejectedError(reasons)
    if len(challenge) > MAX_CHALLENGE:
        reasons.append(
            f"the challenge is {len(challenge)} characters; the documented form is shorter"
        )
    if not challenge.isascii() or not challenge.isprintable():
        reasons.append("the challenge holds control or non-ASCII characters")
    if not challenge.startswith(PREFIX):
        reasons.append(f"the challenge does not start with the documented text {PREFIX.strip()!r}")
    elif not NONCE.fullmatch(challenge[len(PREFIX) :]):
        reasons.append(
            "the challenge's nonce is not 8-128 characters of A-Za-z0-9+/=_- (the documented "
            "form has nothing after the nonce)"
        )
    reasons += transaction_forms(challenge)
    if reasons:
        raise GuardRejectedError(reasons)
    return CheckedChallenge(challenge, origin_host)


def sign_challenge(
    wallet: Wallet,
    challenge_type: object,
    challenge: object,
    *,
    origin_host: str,
    expected_host: str,
) -> str:
    """Check the challenge, then sign it: the signature in base58 (what
    ``/auth/verify`` takes). Nothing is signed when the check refuses."""
    checked = check_challenge(
        challenge_type, challenge, origin_host=origin_host, expected_host=expected_host
    )
    signature = sign_message(wallet, checked.text.encode("utf-8"))
    log.info("challenge_signed", host=checked.host)
    return str(Signature.from_bytes(signature))


def login_signer(wallet: Wallet, expected_host: str) -> Callable[..., str]:
    """`sign_challenge` bound to our wallet and the configured API host: what the
    Trigger V2 client calls to log in (`jupcron.api.trigger_v2.LoginSigner`)."""

    def sign(challenge_type: object, challenge: object, *, origin_host: str) -> str:
        return sign_challenge(
            wallet, challenge_type, challenge, origin_host=origin_host, expected_host=expected_host
        )

    return sign
