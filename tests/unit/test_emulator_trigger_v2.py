"""The emulator's Trigger V2, request by request: login and JWT expiry, the
gateway's key and rate bucket, the vault, the documented limits and codes."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from solders.keypair import Keypair

from jupcron.emulator import Emulator
from jupcron.emulator.common import EmuResponse
from jupcron.emulator.trigger_v2_tx import COSIGNER
from jupcron.emulator.txbuild import from_b64

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
BASE = "/trigger/v2"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Session:
    """One wallet talking to an emulator, in process."""

    def __init__(self, emulator: Emulator, key: str | None = None) -> None:
        self.emu, self.keypair, self.key = emulator, Keypair(), key
        self.wallet = str(self.keypair.pubkey())
        self.token: str | None = None

    def call(self, method: str, path: str, body: Any = None, token: str | None = None,
             query: dict[str, str] | None = None) -> EmuResponse:  # fmt: skip
        headers = {"x-api-key": self.key} if self.key else {}
        bearer = token if token is not None else self.token
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        raw = b"" if body is None else json.dumps(body).encode()
        return self.emu.handle(method, BASE + path, query or {}, headers, raw)

    def login(self) -> str:
        text = self.call(
            "POST", "/auth/challenge", {"walletPubkey": self.wallet, "type": "message"}
        ).json()["challenge"]
        signature = str(self.keypair.sign_message(text.encode()))
        answer = self.call(
            "POST",
            "/auth/verify",
            {"type": "message", "walletPubkey": self.wallet, "signature": signature},
        )
        assert answer.status == 200, answer.json()
        self.token = answer.json()["token"]
        return self.token

    def vault(self) -> str:
        self.call("GET", "/vault/register")
        return str(self.call("GET", "/vault").json()["vaultPubkey"])

    def deposit(self, amount: int = 20_000_000, **extra: Any) -> dict[str, Any]:
        body = {"inputMint": USDC, "outputMint": SOL, "userAddress": self.wallet,
                "amount": str(amount), "orderType": "dca", **extra}  # fmt: skip
        answer = self.call("POST", "/deposit/craft", body)
        assert answer.status == 200, answer.json()
        return dict(answer.json())

    def signed(self, tx_b64: str) -> str:
        tx = from_b64(tx_b64)
        from solders.message import to_bytes_versioned
        from solders.signature import Signature
        from solders.transaction import VersionedTransaction

        message = to_bytes_versioned(tx.message)
        sigs = [
            self.keypair.sign_message(message),
            *([Signature.default()] * (len(tx.signatures) - 1)),
        ]
        return base64.b64encode(bytes(VersionedTransaction.populate(tx.message, sigs))).decode()

    def dca(self, deposit: dict[str, Any], **changes: Any) -> EmuResponse:
        body = {"depositRequestId": deposit["requestId"], "depositSignedTx": self.signed(deposit["transaction"]),
                "userPubkey": self.wallet, "inputMint": USDC, "outputMint": SOL,
                "inputAmount": deposit["amount"], "orderCount": 2, "intervalSeconds": 3600, **changes}  # fmt: skip
        return self.call("POST", "/orders/dca", body)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def session(clock: Clock) -> Session:
    return Session(Emulator(seed=5, clock=clock, jwt_ttl=600))


def test_a_jwt_is_a_real_jwt_that_expires_after_its_ttl(session: Session, clock: Clock) -> None:
    token = session.login()
    header, payload, _ = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "HS256", "typ": "JWT"}
    assert (claims["sub"], claims["exp"] - claims["iat"]) == (session.wallet, 600)
    assert session.call("GET", "/vault").status == 404  # authenticated: no vault yet
    clock.now += 600
    answer = session.call("GET", "/vault")
    assert (answer.status, answer.json()) == (401, {"error": "Unauthorized"})


@pytest.mark.parametrize("token", ["", "not.a.jwt", "eyJhbGciOiJIUzI1NiJ9.e30.forged"])
def test_an_authenticated_route_wants_a_jwt_it_issued(session: Session, token: str) -> None:
    answer = session.call("POST", "/deposit/craft", {}, token=token or None)
    assert (answer.status, answer.json()) == (401, {"error": "Unauthorized"})


def test_login_refuses_a_wrong_signature_an_old_challenge_and_a_bad_type(
    session: Session, clock: Clock
) -> None:
    wallet = session.wallet
    bad = session.call("POST", "/auth/challenge", {"walletPubkey": wallet, "type": "sms"})
    assert bad.status == 400
    assert bad.json()["error"] == "Request validation failed"
    assert "type" in bad.json()["details"]
    session.call("POST", "/auth/challenge", {"walletPubkey": wallet, "type": "message"})
    forged = str(Keypair().sign_message(b"something else"))
    answer = session.call(
        "POST", "/auth/verify", {"type": "message", "walletPubkey": wallet, "signature": forged}
    )
    assert (answer.status, answer.json()) == (401, {"error": "Invalid signature"})
    clock.now += 301  # challenges live 5 minutes
    answer = session.call(
        "POST", "/auth/verify", {"type": "message", "walletPubkey": wallet, "signature": forged}
    )
    assert (answer.status, answer.json()["error"]) == (400, "Challenge not found or expired")


def test_the_challenge_has_the_documented_form(session: Session) -> None:
    text = session.call(
        "POST", "/auth/challenge", {"walletPubkey": session.wallet, "type": "message"}
    ).json()
    assert text["type"] == "message"
    assert text["challenge"].startswith(
        "Sign this message to authenticate with Jupiter Trigger Order API: "
    )


def test_the_gateway_wants_the_api_key_on_trigger_v2_too(clock: Clock) -> None:
    keyed = Session(Emulator(seed=5, clock=clock, api_key="k-123456"))
    answer = keyed.call(
        "POST", "/auth/challenge", {"walletPubkey": keyed.wallet, "type": "message"}
    )
    assert (answer.status, answer.json()) == (401, {"code": 401, "message": "Invalid API key"})
    keyed.key = "k-123456"
    keyed.login()


def test_trigger_v2_shares_the_one_rate_bucket(clock: Clock) -> None:
    emu = Emulator(seed=5, clock=clock, rate_limit=2 / 60)  # 2 requests a minute
    session = Session(emu)
    session.login()  # challenge + verify: the bucket is full
    answer = session.call("GET", "/vault")
    assert answer.status == 429
    assert (
        answer.headers["x-ratelimit-remaining"] == "-1"
    )  # signed: one over the limit (portal/rate-limits.mdx)
    assert emu.handle("GET", "/ultra/v1/order", {}, {}, b"").status == 429  # the same bucket


def test_the_vault_is_registered_once(session: Session) -> None:
    session.login()
    assert session.call("GET", "/vault").json() == {"error": "Vault not found"}
    first = session.call("GET", "/vault/register")
    assert first.status == 201
    again = session.call("GET", "/vault/register")
    assert again.status == 409
    assert again.json()["details"] == {"vaultPubkey": first.json()["vaultPubkey"]}
    assert session.call("GET", "/vault").json()["vaultPubkey"] == first.json()["vaultPubkey"]


def test_deposit_craft_limits_and_codes(session: Session) -> None:
    session.login()
    body = {
        "inputMint": USDC,
        "outputMint": SOL,
        "userAddress": session.wallet,
        "amount": "20000000",
        "orderType": "dca",
    }
    assert session.call("POST", "/deposit/craft", body).json() == {
        "error": "No vault registered for this user"
    }
    vault = session.vault()
    small = session.call("POST", "/deposit/craft", {**body, "amount": "9990000"})
    assert (small.status, small.json()["error"]) == (
        400,
        "Order must be at least 10 USD (current value: 9.99 USD)",
    )
    other = session.call("POST", "/deposit/craft", {**body, "userAddress": str(Keypair().pubkey())})
    assert other.status == 403
    sub = session.call("POST", "/deposit/craft", {**body, "orderSubType": "single"})
    assert sub.json()["error"] == "orderSubType must be omitted when orderType is 'dca'"
    deposit = session.deposit()
    assert (deposit["receiverAddress"], deposit["mint"], deposit["amount"]) == (
        vault,
        USDC,
        "20000000",
    )


def test_dca_create_limits_codes_and_a_single_use_deposit(session: Session) -> None:
    session.login()
    session.vault()
    one = session.dca(session.deposit(), orderCount=1)
    assert (one.status, one.json()) == (400, {"error": "Request validation failed",
                                              "details": {"orderCount": "Too small: expected number to be >=2"}})  # fmt: skip
    fast = session.dca(session.deposit(), intervalSeconds=59)
    assert fast.json()["details"] == {"intervalSeconds": "Too small: expected number to be >=60"}
    thin = session.dca(session.deposit(), orderCount=3)
    assert thin.json()["error"] == "Each order must be at least 10 USD (current value: 6.67 USD)"
    deposit = session.deposit()
    made = session.dca(deposit)
    assert made.status == 200
    assert set(made.json()) == {"id", "txSignature"}
    again = session.dca(deposit)
    assert (
        again.json()["error"]
        == "Deposit transaction not found in cache. Please craft a new deposit first."
    )
    slash = session.call("POST", "/orders/dca/", {})
    assert slash.status == 404  # no trailing slash, as documented


def test_at_most_ten_active_dca_orders(session: Session) -> None:
    session.login()
    session.vault()
    for _ in range(10):
        assert session.dca(session.deposit()).status == 200
    eleventh = session.dca(session.deposit())
    assert (eleventh.status, eleventh.json()["error"]) == (
        400,
        "Maximum of 10 active DCA orders allowed per user",
    )


def test_the_withdrawal_has_the_documented_shape(session: Session) -> None:
    session.login()
    vault = session.vault()
    order = session.dca(session.deposit()).json()["id"]
    answer = session.call("POST", f"/orders/dca/cancel/{order}").json()
    tx = from_b64(answer["transaction"])
    keys = [str(k) for k in tx.message.account_keys]
    header = tx.message.header
    assert (header.num_required_signatures, header.num_readonly_signed_accounts) == (3, 1)
    assert keys[:3] == [session.wallet, vault, str(COSIGNER)]
    # the first round was due at once and filled: one round of 10 USDC comes back
    assert (answer["refundAmount"], answer["roundsRemaining"]) == ("10000000", 1)
    stale = session.call("POST", f"/orders/dca/confirm-cancel/{order}",
                         {"signedTransaction": session.signed(answer["transaction"]), "cancelRequestId": "x"})  # fmt: skip
    assert (
        stale.json()["error"]
        == "Withdrawal transaction not found in cache. Please initiate cancel again."
    )
    done = session.call("POST", f"/orders/dca/confirm-cancel/{order}",
                        {"signedTransaction": session.signed(answer["transaction"]), "cancelRequestId": answer["requestId"]})  # fmt: skip
    assert done.status == 200
    assert session.call("POST", f"/orders/dca/cancel/{order}").json() == {
        "error": "Cannot cancel DCA order in 'cancelled' state"
    }
    assert session.call("POST", "/orders/dca/cancel/nope").status == 404
