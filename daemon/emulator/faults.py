"""Faults the emulator injects on demand, deterministic with a seed.

A fault has a kind, how many times it fires (``count``; 0 = until cleared), an
optional target (``operation``: an operation name or a glob such as
``execute_*``; ``match``: top-level request fields, e.g. ``{"amount": "1234"}``,
so one plan's order is singled out), a ``probability`` drawn from the seeded generator, ``skip``
(let that many matching requests through first) and kind-specific params.
"""

from __future__ import annotations

import fnmatch
import json
import random
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class FaultKind(StrEnum):
    RATE_LIMIT = "rate_limit"  # 429 with Retry-After (param retry_after, default 1)
    SERVER_ERROR = "server_error"  # 5xx (param status, default 500)
    SLOW = "slow"  # answer after `seconds` (default 2)
    DROP = "drop"  # close the connection without an answer
    MALFORMED = "malformed"  # 200 with a body that is not JSON
    WRONG_TYPES = "wrong_types"  # the real answer with fields of the wrong type
    FAILED = "failed"  # execute answers Failed (params code, error)
    LOST_ANSWER = "lost_answer"  # execute lands, then the answer is dropped
    # swap execute lands the transaction but answers -1006 (attempted, timed out); a re-post
    # of the same bytes then answers what happened (Ultra: re-posting polls the status)
    TIMED_OUT = "timed_out"
    # the issued tx drains the fee payer to a foreign key (param `to`); with param
    # `receiver` (a key, or anything else for a random one), a swap pays its output
    # to that stranger instead
    # (Trigger V2: param `variant`, see daemon/emulator/products/trigger_v2/api.py and orders.py)
    HOSTILE = "hostile"
    EXPIRED = "expired"  # execute treats the blockhash as expired
    FORBIDDEN = "forbidden"  # 403: the key lacks permission
    # the issued tx's program call also names the payer's token account of `mint`
    # (default USDT) and, when simulated, empties it: a drain only simulation sees
    HIDDEN_DRAIN = "hidden_drain"
    DROP_FIELD = "drop_field"  # the real answer without `field`, wherever it occurs
    BAD_PAGE = "bad_page"  # a listing answers with another page than the one asked for
    # Trigger V2: the JWT the call carries is taken as expired (401 Unauthorized)
    JWT_EXPIRED = "jwt_expired"
    # a swap quoted (and built) at `factor` (default 0.01) of the market: outAmount and the
    # route's minimum out fall with it; nothing else in the transaction is hostile
    LOW_QUOTE = "low_quote"
    # Swap V2 /order answers 200 with no transaction and only `error` (param `error`),
    # as its spec allows (every field optional; `error` duplicates errorMessage)
    ORDER_ERROR = "order_error"
    # Trigger V2 price-order cancel answers 400 "not yet marked ready to cancel. Retry
    # shortly" (trigger/errors.mdx)
    NOT_READY = "not_ready"
    # a swap /order whose quote the JupiterZ (RFQ) router wins: a market maker's fill
    # (it pays the fee and signs first; its execute lands under the maker's signature);
    # not when the request excludes jupiterz (excludeRouters)
    RFQ = "rfq"


EXECUTE_ONLY = {FaultKind.FAILED, FaultKind.LOST_ANSWER, FaultKind.EXPIRED, FaultKind.TIMED_OUT}
ORDER_ONLY = {FaultKind.HOSTILE, FaultKind.HIDDEN_DRAIN, FaultKind.LOW_QUOTE, FaultKind.ORDER_ERROR,
              FaultKind.NOT_READY, FaultKind.RFQ}  # fmt: skip
EXECUTE_OPERATIONS = {
    "execute_recurring",
    "execute_trigger",
    "execute_ultra",
    "execute_swap",
    # Trigger V2: the calls that land the signed deposit or withdrawal
    "trigger_v2_create_dca",
    "trigger_v2_create_price",
    "trigger_v2_confirm_cancel",
}
ORDER_OPERATIONS = {
    "create_recurring_order",
    "cancel_recurring_order",
    "cancel_trigger_order",
    "cancel_trigger_orders",
    "ultra_order",
    "swap_order",
    # Trigger V2: the answers that carry what we would sign
    "trigger_v2_challenge",
    "trigger_v2_deposit",
    "trigger_v2_cancel",
}


@dataclass
class Fault:
    kind: FaultKind
    count: int = 1
    operation: str | None = None
    probability: float = 1.0
    skip: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    fired: int = 0
    match: dict[str, str] = field(default_factory=dict)

    def applies_to(self, operation: str, request: Mapping[str, str] | None = None) -> bool:
        if self.kind in EXECUTE_ONLY and operation not in EXECUTE_OPERATIONS:
            return False
        if self.kind in ORDER_ONLY and operation not in ORDER_OPERATIONS:
            return False
        if self.match and any((request or {}).get(k) != v for k, v in self.match.items()):
            return False
        return self.operation is None or fnmatch.fnmatchcase(operation, self.operation)

    @property
    def spent(self) -> bool:
        return self.count > 0 and self.fired >= self.count

    def summary(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "count": self.count,
            "operation": self.operation,
            "probability": self.probability,
            "skip": self.skip,
            "params": dict(self.params),
            "fired": self.fired,
            "match": dict(self.match),
        }


def fault_from_dict(data: Mapping[str, Any]) -> Fault:
    """A fault from its JSON form; ValueError with a clear message when wrong."""
    if not isinstance(data, Mapping):
        raise ValueError("a fault must be an object with at least 'kind'")
    known = {"kind", "count", "operation", "probability", "skip", "match"}
    try:
        kind = FaultKind(str(data.get("kind")))
    except ValueError:
        choices = ", ".join(k.value for k in FaultKind)
        raise ValueError(f"unknown fault kind {data.get('kind')!r} (one of: {choices})") from None
    count = data.get("count", 1)
    probability = data.get("probability", 1.0)
    skip = data.get("skip", 0)
    operation = data.get("operation")
    if not isinstance(count, int) or count < 0:
        raise ValueError("fault 'count' must be an integer >= 0 (0 = until cleared)")
    if not isinstance(probability, int | float) or not 0 <= probability <= 1:
        raise ValueError("fault 'probability' must be a number between 0 and 1")
    if not isinstance(skip, int) or skip < 0:
        raise ValueError("fault 'skip' must be an integer >= 0")
    if operation is not None and not isinstance(operation, str):
        raise ValueError("fault 'operation' must be a string")
    match = data.get("match") or {}
    if not isinstance(match, Mapping) or not all(
        isinstance(v, str | int) and not isinstance(v, bool) for v in match.values()
    ):
        raise ValueError("fault 'match' must map request fields to strings or integers")
    params = {k: v for k, v in data.items() if k not in known}
    params.update(data.get("params") or {})
    params.pop("params", None)
    matched = {str(k): str(v) for k, v in match.items()}
    return Fault(kind, count, operation, float(probability), skip, params, match=matched)


def request_fields(query: Mapping[str, str], body: bytes) -> dict[str, str]:
    """A request's top-level query and JSON body fields as text (for fault ``match``)."""
    fields = dict(query)
    try:
        data = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str | int) and not isinstance(value, bool):
                fields[str(key)] = str(value)
    return fields


class Faults:
    """The pending faults; `take` picks the first that fires for an operation."""

    def __init__(self, seed: int = 0) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._seed = seed
        self._rng = random.Random(seed)
        self.history: list[tuple[str, str]] = []  # (operation, kind) of every fault fired

    def add(self, kind: str | FaultKind, count: int = 1, **params: Any) -> Fault:
        data: dict[str, Any] = {"kind": str(kind), "count": count, **params}
        fault = fault_from_dict(data)
        with self._lock:
            self._faults.append(fault)
        return fault

    def extend(self, items: Iterable[Mapping[str, Any]]) -> list[Fault]:
        faults = [fault_from_dict(item) for item in items]  # all valid, or none added
        with self._lock:
            self._faults.extend(faults)
        return faults

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self._rng = random.Random(self._seed)
            self.history.clear()

    def take(
        self,
        operation: str,
        kinds: Iterable[FaultKind] | None = None,
        request: Mapping[str, str] | None = None,
    ) -> Fault | None:
        """The fault to apply to this request (consumed), or None. `request`: its
        top-level fields (query or JSON body) as text, for faults with ``match``."""
        wanted = set(kinds) if kinds is not None else None
        with self._lock:
            for fault in self._faults:
                if fault.spent or not fault.applies_to(operation, request):
                    continue
                if wanted is not None and fault.kind not in wanted:
                    continue
                if fault.skip > 0:
                    fault.skip -= 1
                    continue
                if fault.probability < 1.0 and self._rng.random() >= fault.probability:
                    continue
                fault.fired += 1
                self.history.append((operation, str(fault.kind)))
                return fault
            return None

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [f.summary() for f in self._faults if not f.spent]
