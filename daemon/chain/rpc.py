"""A tiny Solana JSON-RPC client: a signature's status (crash recovery), a landed
transaction and an address's recent transactions (finding a transaction by a
signature that is not its id: `jupcron.chain.txid`), account owners and states,
`simulateTransaction` (txguard's balance check), a mint's
decimals (token facts for `jupcron report`) and the block height (whether a
Swap V2 order's ``lastValidBlockHeight`` has passed).

An RPC URL usually carries the provider's key (``?api-key=…`` or a path token):
it is shown only through `mask_url`, and plain ``http://`` is refused unless it
goes to this machine or ``rpc.allow_insecure_http`` is set.
"""

from __future__ import annotations

import base64
import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from jupcron.chain.balances import TransactionBalances, parse_balances
from jupcron.config import RpcConfig
from jupcron.errors import ApiErrorInfo, ApiGarbageError, ApiTransportError
from jupcron.urls import checked_url, mask_url

MAX_ACCOUNTS_PER_CALL = 100  # getMultipleAccounts' documented limit
TOKEN_PROGRAMS = frozenset(
    {"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"}
)
MINT_SIZE = 82  # SPL Token mint: authority option (36), supply (8), decimals (1), ...
DECIMALS_AT = 44


@dataclass(frozen=True)
class SignatureStatus:
    found: bool
    err: Any = None
    slot: int | None = None
    confirmation: str | None = None

    @property
    def landed_ok(self) -> bool:
        return self.found and self.err is None


@dataclass(frozen=True)
class LandedTransaction:
    """A transaction the node holds (`getTransaction`): its id (its first signature),
    every signature it carries, in order, and its outcome; the balances it reports
    (what a swap whose answers were lost gave and got: `jupcron.chain.balances`), or
    why they cannot be read (`balances_problem`: a node answer that carries none, or
    garbage, never stops a reader that wants only the signatures)."""

    id: str
    signatures: tuple[str, ...]
    err: Any = None
    slot: int | None = None
    balances: TransactionBalances | None = None
    balances_problem: str | None = None

    @property
    def landed_ok(self) -> bool:
        return self.err is None


@dataclass(frozen=True)
class AddressSignature:
    """One entry of `getSignaturesForAddress`: a transaction id touching the address."""

    signature: str
    slot: int | None
    block_time: int | None  # unix seconds, None when the node does not know it
    err: Any = None


@dataclass(frozen=True)
class AccountState:
    """One account as the chain holds it (or as a simulation leaves it)."""

    lamports: int
    owner: str
    data: bytes


@dataclass(frozen=True)
class Simulation:
    err: Any  # None when the transaction would succeed
    accounts: tuple[AccountState | None, ...]  # in the order asked for
    logs: tuple[str, ...]


class SolanaRpc:
    def __init__(
        self,
        url: str,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        checked_url(
            url,
            key="rpc.url",
            carries="the URL's key and our transactions",
            allow_insecure=allow_insecure_http,
        )
        self.url = url
        self._http = httpx.Client(timeout=timeout, transport=transport)
        self._ids = itertools.count(1)
        self._owners: dict[str, str | None] = {}  # a mint's owner program never changes
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SolanaRpc(url={mask_url(self.url)!r})"  # provider URLs often carry a key

    def _call(self, operation: str, method: str, params: list[Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        info = ApiErrorInfo(operation=operation)
        try:
            response = self._http.post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise ApiTransportError(f"RPC unreachable: {type(exc).__name__}", info) from exc
        info.http_status = response.status_code
        try:
            data = response.json()
        except ValueError as exc:
            raise ApiGarbageError("RPC answered with a body that is not JSON", info) from exc
        if not isinstance(data, dict) or "result" not in data:
            error = data.get("error") if isinstance(data, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            raise ApiGarbageError(f"RPC {method} failed: {text or 'no result'}", info)
        return data["result"]

    def signature_status(self, signature: str) -> SignatureStatus:
        """`getSignatureStatuses` with the whole history searched."""
        result = self._call(
            "rpc_signature_status",
            "getSignatureStatuses",
            [[signature], {"searchTransactionHistory": True}],
        )
        try:
            value = result["value"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise ApiGarbageError(
                "RPC answered with an unexpected body", ApiErrorInfo("rpc_signature_status")
            ) from exc
        if value is None:
            return SignatureStatus(found=False)
        return SignatureStatus(
            found=True,
            err=value.get("err"),
            slot=value.get("slot"),
            confirmation=value.get("confirmationStatus"),
        )

    def transaction(self, txid: str) -> LandedTransaction | None:
        """`getTransaction` at ``confirmed`` (None: the node has no transaction with
        this id): its signatures, outcome and balances, in the plain ``json`` encoding
        (which lists ``transaction.signatures`` in order, account keys as strings)."""
        options = {
            "encoding": "json",
            "commitment": "confirmed",
            "maxSupportedTransactionVersion": 0,
        }
        result = self._call("rpc_transaction", "getTransaction", [txid, options])
        if result is None:
            return None
        info = ApiErrorInfo("rpc_transaction")
        try:
            signatures = tuple(str(s) for s in result["transaction"]["signatures"])
            meta = result.get("meta") or {}
            slot = result.get("slot")
        except (KeyError, TypeError, AttributeError) as exc:
            raise ApiGarbageError("RPC answered getTransaction unreadably", info) from exc
        if not signatures or signatures[0] != txid:
            raise ApiGarbageError("RPC answered getTransaction with another transaction", info)
        try:
            balances, problem = parse_balances(result), None
        except ApiGarbageError as exc:
            balances, problem = None, str(exc)
        return LandedTransaction(txid, signatures, meta.get("err"), slot, balances, problem)

    def signatures_for_address(
        self, address: str, *, before: str | None = None, limit: int = 1000
    ) -> list[AddressSignature]:
        """`getSignaturesForAddress` at ``confirmed``: the ids of the transactions that
        touched `address`, newest first, older than `before` (a page's last id)."""
        options: dict[str, Any] = {"commitment": "confirmed", "limit": limit}
        if before is not None:
            options["before"] = before
        result = self._call("rpc_address_signatures", "getSignaturesForAddress",
                            [address, options])  # fmt: skip
        info = ApiErrorInfo("rpc_address_signatures")
        if not isinstance(result, list):
            raise ApiGarbageError("RPC answered getSignaturesForAddress without a list", info)
        try:
            found = [(str(i["signature"]), i.get("slot"), i.get("blockTime"), i.get("err"))
                     for i in result]  # fmt: skip
        except (KeyError, TypeError, AttributeError) as exc:
            raise ApiGarbageError("RPC answered getSignaturesForAddress unreadably", info) from exc
        return [AddressSignature(*item) for item in found]

    def accounts(self, addresses: Sequence[str]) -> list[AccountState | None]:
        """`getMultipleAccounts`, in the order asked (None: no such account)."""
        found: list[AccountState | None] = []
        for start in range(0, len(addresses), MAX_ACCOUNTS_PER_CALL):
            chunk = list(addresses[start : start + MAX_ACCOUNTS_PER_CALL])
            result = self._call(
                "rpc_accounts",
                "getMultipleAccounts",
                [chunk, {"encoding": "base64", "commitment": "confirmed"}],
            )
            found += _accounts(result.get("value") if isinstance(result, dict) else None, chunk)
        return found

    def owners(self, addresses: Sequence[str]) -> dict[str, str | None]:
        """Each account's owner program (None: no such account), cached for good:
        meant for mints, whose program never changes."""
        with self._lock:
            missing = [a for a in dict.fromkeys(addresses) if a not in self._owners]
        if missing:
            states = self.accounts(missing)
            with self._lock:
                for address, state in zip(missing, states, strict=True):
                    if state is not None:
                        self._owners[address] = state.owner
        with self._lock:
            return {a: self._owners.get(a) for a in addresses}

    def simulate(self, tx_b64: str, addresses: Sequence[str]) -> Simulation:
        """`simulateTransaction` (no signature check, the blockhash kept), with the
        state of `addresses` after it."""
        options = {
            "encoding": "base64",
            "sigVerify": False,
            "replaceRecentBlockhash": False,
            "commitment": "confirmed",
            "accounts": {"encoding": "base64", "addresses": list(addresses)},
        }
        result = self._call("rpc_simulate", "simulateTransaction", [tx_b64, options])
        value = result.get("value") if isinstance(result, dict) else None
        if not isinstance(value, dict):
            raise ApiGarbageError(
                "RPC simulation answered without a value", ApiErrorInfo("rpc_simulate")
            )
        err = value.get("err")
        states: list[AccountState | None] = [None] * len(addresses)
        if err is None:
            states = _accounts(value.get("accounts"), list(addresses))
        logs = value.get("logs") or []
        return Simulation(err, tuple(states), tuple(str(line) for line in logs))

    def block_height(self, commitment: str = "finalized") -> int:
        """`getBlockHeight` at `commitment`. Finalized by default: once the finalized
        height is past a transaction's last valid block height, every block it
        could have landed in is final, so "not found" then means "never lands"."""
        result = self._call("rpc_block_height", "getBlockHeight", [{"commitment": commitment}])
        if isinstance(result, bool) or not isinstance(result, int) or result < 0:
            raise ApiGarbageError(
                "RPC answered getBlockHeight without a block height",
                ApiErrorInfo("rpc_block_height"),
            )
        return result

    def mint_decimals(self, mint: str) -> int | None:
        """A SPL Token (or Token-2022) mint's decimals, byte 44 of its 82-byte
        account; ``None`` when there is no such mint account."""
        (state,) = self.accounts([mint])
        if state is None or state.owner not in TOKEN_PROGRAMS or len(state.data) < MINT_SIZE:
            return None
        return int(state.data[DECIMALS_AT])

    def close(self) -> None:
        self._http.close()


def _accounts(raw: Any, addresses: list[str]) -> list[AccountState | None]:
    info = ApiErrorInfo("rpc_accounts")
    if not isinstance(raw, list) or len(raw) != len(addresses):
        raise ApiGarbageError("RPC answered with a wrong number of accounts", info)
    states: list[AccountState | None] = []
    for item in raw:
        if item is None:
            states.append(None)
            continue
        try:
            data = item["data"]
            blob = base64.b64decode(data[0] if isinstance(data, list) else data, validate=True)
            states.append(AccountState(int(item["lamports"]), str(item["owner"]), blob))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ApiGarbageError("RPC answered with an account it cannot describe", info) from exc
    return states


def rpc_from_config(config: RpcConfig) -> SolanaRpc | None:
    """The configured RPC client (``rpc.url``), or None when there is none."""
    if config.url is None:
        return None
    return SolanaRpc(config.url, allow_insecure_http=config.allow_insecure_http)
