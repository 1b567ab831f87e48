"""A tiny Solana JSON-RPC client: the signature's status, for crash recovery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from daemon.errors import ApiErrorInfo, ApiGarbageError, ApiTransportError


@dataclass(frozen=True)
class SignatureStatus:
    found: bool
    err: Any = None
    slot: int | None = None
    confirmation: str | None = None

    @property
    def landed_ok(self) -> bool:
        return self.found and self.err is None


class SolanaRpc:
    def __init__(
        self, url: str, *, timeout: float = 10.0, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.url = url
        self._http = httpx.Client(timeout=timeout, transport=transport)

    def signature_status(self, signature: str) -> SignatureStatus:
        """`getSignatureStatuses` with the whole history searched."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "getSignatureStatuses",
            "params": [[signature], {"searchTransactionHistory": True}],
        }
        info = ApiErrorInfo(operation="rpc_signature_status")
        try:
            response = self._http.post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise ApiTransportError(f"RPC unreachable: {type(exc).__name__}", info) from exc
        try:
            data = response.json()
            value = data["result"]["value"][0]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            info.http_status = response.status_code
            raise ApiGarbageError("RPC answered with an unexpected body", info) from exc
        if value is None:
            return SignatureStatus(found=False)
        return SignatureStatus(
            found=True,
            err=value.get("err"),
            slot=value.get("slot"),
            confirmation=value.get("confirmationStatus"),
        )

    def close(self) -> None:
        self._http.close()
