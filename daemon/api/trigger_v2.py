"""The Trigger V2 client: login (challenge, verify), the vault, deposits, create,
history, cancel and confirm-cancel (docs/products.md), over `JupiterClient`'s
paced, retried, observed calls (one rate bucket with every other call: the
docs name no separate one for ``/trigger/v2``).

The JWT: fetched by signing a login challenge (only through `LoginSigner`,
txguard's checked path), kept **in memory only** (a `SecretStr`), masked in
every log line, reused until a minute before the earlier of its ``exp`` claim
and 24 hours (the documented TTL), and fetched again when an authenticated
call answers ``401`` (then the call is made once more). It never goes into an
event, a run row or an exception.

Errors: the gateway's own ``401``/``403`` (``{code, message}``: the API key) stay
`ApiAuthError` (the daemon stops, as for v1). The Trigger API's ``{error}``
``401`` after a fresh JWT and its ``403`` (not your order, wallet mismatch) are
`ApiRejectedError`: the run fails, the daemon goes on.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import quote, urlsplit

import httpx
import structlog
from pydantic import BaseModel, SecretStr

from jupcron.api import classify
from jupcron.api.client import JupiterClient, Observer
from jupcron.api.trigger_v2_models import (
    CancelCraft,
    Challenge,
    Created,
    Deposit,
    Family,
    HistoryPage,
    Vault,
    Verified,
    jwt_expiry,
    parse_history,
)
from jupcron.errors import ApiAuthError, ApiRejectedError, JupcronError
from jupcron.logs import forget_value, mask_value

log = structlog.get_logger(__name__)

M = TypeVar("M", bound=BaseModel)
PREFIX = "/trigger/v2"
JWT_TTL = 24 * 3600.0  # documented: "JWT TTL 24 hours"
JWT_MARGIN = 60.0  # fetch a new one this long before it runs out
_JWT_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
HISTORY_LIMIT = 100  # the most a page may hold (documented 1-100)


class LoginSigner(Protocol):
    """Checks a login challenge and signs it (txguard's `sign_challenge`, bound to a
    wallet and the configured host): the signature in base58, or `GuardRejectedError`."""

    def __call__(self, challenge_type: object, challenge: object, *, origin_host: str) -> str: ...


@dataclass(frozen=True)
class _Jwt:
    value: SecretStr
    expires_at: float  # unix seconds, margin included


class TriggerV2Api:
    """One wallet's session with Trigger V2: its JWT and its vault."""

    def __init__(
        self,
        client: JupiterClient,
        wallet: str,
        signer: LoginSigner,
        *,
        prefix: str = PREFIX,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.wallet, self.prefix = client, wallet, prefix.rstrip("/")
        self._signer, self._wall = signer, wall
        self._lock = threading.Lock()
        self._jwt: _Jwt | None = None
        self._vault: str | None = None
        self.recalled = False  # whether the vault our signed runs paid was looked up
        self.logins = 0

    def __repr__(self) -> str:
        return f"TriggerV2Api(wallet={self.wallet!r}, jwt={'***' if self._jwt else None})"

    @property
    def expected_host(self) -> str:
        """The host (and port) a login challenge must come from: the configured API's."""
        return urlsplit(self.client.base_url).netloc.lower()

    # --- the JWT ---------------------------------------------------------------

    def _token(self, observe: Observer | None) -> SecretStr:
        with self._lock:
            jwt = self._jwt
            if jwt is not None and self._wall() < jwt.expires_at:
                return jwt.value
            if jwt is not None:
                self._drop(jwt.value)
            return self._login(observe)

    def _drop(self, token: SecretStr) -> None:
        if self._jwt is not None and self._jwt.value == token:
            self._jwt = None
        forget_value(token.get_secret_value())

    def _login(self, observe: Observer | None) -> SecretStr:
        origin: list[str] = []

        def parse_challenge(status: int, data: Any, response: httpx.Response) -> Challenge:
            origin.append(response.url.netloc.decode("ascii", "replace").lower())
            return _model(Challenge, data, response)

        body = {"walletPubkey": self.wallet, "type": "message"}
        answer = self._call(
            "trigger_v2_challenge", "POST", "/auth/challenge", json=body,
            parse=parse_challenge, observe=observe, jwt=False,
        )  # fmt: skip
        text = answer.challenge if answer.type == "message" else answer.transaction
        signature = self._signer(answer.type, text, origin_host=origin[-1])  # txguard decides

        def parse_verified(status: int, data: Any, response: httpx.Response) -> Verified:
            verified = _model(Verified, data, response)
            if not _JWT_SHAPE.fullmatch(verified.token):
                raise classify.garbage("", response, "the token is not a JWT")
            return verified

        body = {"type": "message", "walletPubkey": self.wallet, "signature": signature}
        verified = self._call(
            "trigger_v2_verify", "POST", "/auth/verify", json=body, parse=parse_verified,
            observe=observe, jwt=False,
        )  # fmt: skip
        token = verified.token
        mask_value(token)
        now = self._wall()
        expiry = min(jwt_expiry(token) or now + JWT_TTL, now + JWT_TTL) - JWT_MARGIN
        self._jwt = _Jwt(SecretStr(token), expiry)
        self.logins += 1
        log.info("trigger_v2_login", wallet=self.wallet, valid_for=round(expiry - now))
        return self._jwt.value

    # --- calls -------------------------------------------------------------------

    def _call(
        self,
        operation: str,
        method: str,
        path: str,
        *,
        parse: Callable[[int, Any, httpx.Response], M],
        observe: Observer | None,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        spare: float | None = None,
        jwt: bool = True,
    ) -> M:
        """One call, with the JWT (`jwt`; the login's own calls go without): on a 401,
        one fresh login and one more try. The Trigger API's own 401/403 become
        `ApiRejectedError` (`spare`: a background call, on spare capacity only)."""

        def once(token: SecretStr | None) -> M:
            headers = {"authorization": f"Bearer {token.get_secret_value()}"} if token else None
            try:
                return self.client._call(
                    operation, method, self.prefix + path, parse=parse, observe=observe,
                    json=json, params=params, headers=headers, spare=spare,
                )  # fmt: skip
            except ApiAuthError as exc:
                if not _from_trigger_api(exc):
                    raise  # the gateway refused the API key: as for every product
                info = exc.info
                what = info.error or f"HTTP {info.http_status}"
                if info.http_status == 401 and token is not None:
                    raise _Unauthorized(f"{operation}: HTTP 401 {what}", info) from None
                raise ApiRejectedError(
                    f"{operation}: HTTP {info.http_status}: {what}", info
                ) from None

        if not jwt:
            return once(None)
        token = self._token(observe)
        try:
            return once(token)
        except _Unauthorized:
            log.info("trigger_v2_jwt_refused", operation=operation)
            with self._lock:
                self._drop(token)
        try:
            return once(self._token(observe))
        except _Unauthorized as exc:
            raise ApiRejectedError(
                f"{operation}: the API refused a JWT it had just issued (HTTP 401)", exc.info
            ) from None

    # --- the vault ---------------------------------------------------------------

    def recall(self, vault: str | None) -> None:
        """Pin the vault this wallet's signed runs paid before (the store's word, read
        once per session): an answer naming another one is refused from the first."""
        self.recalled = True
        if vault is not None and self._vault is None:
            self._vault = vault

    def vault(self, observe: Observer | None = None) -> str:
        """The wallet's vault (``GET /vault``, registering one on first use), pinned
        for the life of this session (and across sessions: `recall`): a later answer
        naming another one is refused."""
        parse = _parser(Vault)
        try:
            found = self._call("trigger_v2_vault", "GET", "/vault", parse=parse,
                                 observe=observe)  # fmt: skip
        except ApiRejectedError as exc:
            if exc.info.http_status != 404:
                raise
            try:
                found = self._call("trigger_v2_register_vault", "GET", "/vault/register",
                                     parse=parse, observe=observe)  # fmt: skip
            except ApiRejectedError as again:
                if again.info.http_status != 409:  # registered meanwhile: read it
                    raise
                found = self._call("trigger_v2_vault", "GET", "/vault", parse=parse,
                                     observe=observe)  # fmt: skip
            log.info("trigger_v2_vault_registered", vault=found.vault_pubkey)
        if found.user_pubkey != self.wallet:
            raise ApiRejectedError(
                f"trigger_v2_vault: the vault answered is for {found.user_pubkey}, "
                f"not our wallet {self.wallet}"
            )
        if self._vault is not None and found.vault_pubkey != self._vault:
            raise ApiRejectedError(
                f"trigger_v2_vault: the API now names vault {found.vault_pubkey}; it named "
                f"{self._vault} before, where our signed runs paid (a wallet has one "
                "vault): nothing is signed into another"
            )
        self._vault = found.vault_pubkey
        return found.vault_pubkey

    # --- orders ------------------------------------------------------------------

    def craft_deposit(self, body: Mapping[str, Any], observe: Observer | None = None) -> Deposit:
        """``POST /deposit/craft``; `body` without ``userAddress`` (ours is added)."""
        return self._call("trigger_v2_deposit", "POST", "/deposit/craft",
                            json={**body, "userAddress": self.wallet}, parse=_parser(Deposit),
                            observe=observe)  # fmt: skip

    def create(
        self,
        family: Family,
        body: Mapping[str, Any],
        deposit_request_id: str,
        deposit_signed_tx: str,
        observe: Observer | None = None,
    ) -> Created:
        """``POST /orders/dca`` or ``/orders/price`` with the signed deposit (identical
        on every retry: the deposit's requestId is single-use, its bytes land once)."""
        full = {**body, "userPubkey": self.wallet, "depositRequestId": deposit_request_id,
                "depositSignedTx": deposit_signed_tx}  # fmt: skip
        return self._call(f"trigger_v2_create_{family}", "POST", f"/orders/{family}",
                            json=full, parse=_parser(Created), observe=observe)  # fmt: skip

    def cancel(self, family: Family, order_id: str, observe: Observer | None = None) -> CancelCraft:
        """``POST /orders/{family}/cancel/{id}``: the unsigned withdrawal."""
        path = f"/orders/{family}/cancel/{quote(order_id, safe='')}"
        return self._call("trigger_v2_cancel", "POST", path, parse=_parser(CancelCraft),
                            observe=observe)  # fmt: skip

    def confirm_cancel(
        self,
        family: Family,
        order_id: str,
        signed_transaction: str,
        cancel_request_id: str,
        observe: Observer | None = None,
    ) -> Created:
        """``POST /orders/{family}/confirm-cancel/{id}`` (same body on every retry)."""
        path = f"/orders/{family}/confirm-cancel/{quote(order_id, safe='')}"
        body = {"signedTransaction": signed_transaction, "cancelRequestId": cancel_request_id}
        return self._call("trigger_v2_confirm_cancel", "POST", path, json=body,
                            parse=_parser(Created), observe=observe)  # fmt: skip

    def history(
        self,
        family: Family,
        state: str,
        offset: int = 0,
        observe: Observer | None = None,
        spare: float | None = None,
    ) -> HistoryPage:
        """One page of ``GET /orders/history/dca`` or ``/orders/history`` (`spare`: the
        follower's, on spare capacity only)."""
        path = "/orders/history/dca" if family == "dca" else "/orders/history"
        params = {"state": state, "limit": str(HISTORY_LIMIT), "offset": str(offset),
                  "sort": "created_at", "dir": "desc"}  # fmt: skip

        def parse(status: int, data: Any, response: httpx.Response) -> HistoryPage:
            try:
                return parse_history(data)
            except ValueError as exc:
                raise classify.garbage("", response, str(exc)) from None

        return self._call(f"trigger_v2_history_{family}", "GET", path, params=params,
                            parse=parse, observe=observe, spare=spare)  # fmt: skip


class _Unauthorized(ApiRejectedError):
    """The Trigger API refused the JWT (401): a new one is fetched once."""


def _from_trigger_api(exc: ApiAuthError) -> bool:
    """The Trigger API's own error (``{"error": ...}``), not the gateway's
    (``{"code": 401|403, "message": ...}``) about the API key."""
    try:
        data = json.loads(exc.info.body or "")
    except ValueError:
        return False
    return isinstance(data, dict) and "error" in data and "code" not in data


def _model(model: type[M], data: Any, response: httpx.Response) -> M:
    if not isinstance(data, dict):
        raise classify.garbage("", response, "not a JSON object")
    try:
        return model.model_validate(data)
    except JupcronError:
        raise
    except ValueError as exc:
        raise classify.garbage("", response, f"unexpected fields ({type(exc).__name__})") from None


def _parser(model: type[M]) -> Callable[[int, Any, httpx.Response], M]:
    def parse(status: int, data: Any, response: httpx.Response) -> M:
        return _model(model, data, response)

    return parse
