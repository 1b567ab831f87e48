"""What the emulator has seen and done: issued orders, landed executions,
trigger and recurring orders, and wallet balances per (owner, mint).

Thread-safe: every method takes the ledger's lock. Amounts are int base units.
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

SOL_MINT = "So11111111111111111111111111111111111111112"

# what a wallet holds the first time the emulator sees it (mint -> base units)
DEFAULT_BALANCES: dict[str, int] = {
    SOL_MINT: 100 * 10**9,  # 100 SOL
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v": 100_000 * 10**6,  # 100k USDC
    "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB": 100_000 * 10**6,  # 100k USDT
}


@dataclass
class IssuedOrder:
    """A transaction handed out by an order call, waiting for its execute."""

    request_id: str
    kind: str  # recurring | trigger_cancel | swap
    owner: str
    message: bytes = field(repr=False)
    issued_at: float
    input_mint: str | None = None
    output_mint: str | None = None
    in_amount: int = 0
    out_amount: int = 0
    order: str | None = None
    hostile: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Execution:
    """One execute that was decided (landed, or failed), with its stored answer."""

    request_id: str
    signature: str
    kind: str
    owner: str
    at: float
    slot: int
    landed: bool
    status: str  # Success | Failed
    input_mint: str | None = None
    output_mint: str | None = None
    in_amount: int = 0
    out_amount: int = 0
    error: str | None = None
    code: int | None = None
    answer_status: int = 200
    answer: dict[str, Any] = field(default_factory=dict, repr=False)
    # for the RPC: the transaction's signatures in order (its id, `signature`, first)
    # and its account keys; empty: the one `signature`, and `owner` (the fee payer)
    signatures: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()
    # for the RPC's transaction meta (`jupcron.emulator.txmeta`), a swap's only: the
    # fee it was charged, and the owner's balances of its two mints before and after
    # it (base units; SOL native); `opened`: the mints whose token account it created
    fee: int = 0
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    opened: tuple[str, ...] = ()

    @property
    def all_signatures(self) -> tuple[str, ...]:
        return self.signatures or (self.signature,)

    @property
    def all_accounts(self) -> tuple[str, ...]:
        return self.accounts or (self.owner,)


@dataclass
class TriggerOrder:
    order: str
    maker: str | None  # None: an example order, the first wallet to cancel it owns it
    input_mint: str
    output_mint: str
    making_amount: int
    taking_amount: int
    status: str = "Open"  # Open | Completed | Cancelled | Expired
    created_at: float = 0.0
    expired_at: float | None = None
    remaining: int | None = None  # making amount not yet filled (None: all of it)
    refunded: int = 0
    open_tx: str = ""
    close_tx: str = ""
    updated_at: float = 0.0
    trades: list[dict[str, Any]] = field(default_factory=list)

    @property
    def left(self) -> int:
        return self.making_amount if self.remaining is None else self.remaining


# Open limit orders every emulator holds from the start (and after a reset): the
# ones the shipped examples name (config/plans/trigger-cancel.yaml), so they run
# against it unseeded. A test keeps this in step with the examples.
EXAMPLE_TRIGGER_ORDERS: tuple[TriggerOrder, ...] = (
    TriggerOrder(
        order="9yXwWmT3rAEdGBVLbD4pgxQTcDx4mQ3BFx2XoeqF1tmZ",
        maker=None,
        input_mint="EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",  # 50 USDC ...
        output_mint=SOL_MINT,  # ... for 0.25 SOL
        making_amount=50_000_000,
        taking_amount=250_000_000,
    ),
)


@dataclass
class RecurringOrder:
    order: str
    user: str
    input_mint: str
    output_mint: str
    in_amount: int
    number_of_orders: int
    interval: int
    created_at: float
    signature: str
    start_at: float | None = None
    rounds: int = 0  # rounds filled
    in_used: int = 0
    out_received: int = 0
    status: str = "active"  # active | completed | cancelled
    close_tx: str = ""
    updated_at: float = 0.0
    trades: list[dict[str, Any]] = field(default_factory=list)


class RecurringOrders(dict[str, RecurringOrder]):
    """The recurring orders by key. Each one set is also noted in `placed` for the
    keeper (`jupcron.emulator.keeper.catch_up`), which keeps the open ones in the order
    their next round is due (`due`, a heap; `queued`: each key's live entry there): a
    request then costs the rounds that are due, not a look at every order ever placed
    (Jupiter's answers do not slow down with its order book)."""

    def __init__(self) -> None:
        super().__init__()
        self.placed: list[str] = []  # keys set since the keeper last looked
        self.due: list[tuple[float, int, str]] = []  # (next round due, tie-break, key)
        self.queued: dict[str, float] = {}  # key -> when its live entry in `due` is
        self.ties = itertools.count()  # equal times: the order placed first, first

    def __setitem__(self, key: str, order: RecurringOrder) -> None:
        super().__setitem__(key, order)
        self.placed.append(key)


class Ledger:
    def __init__(self, default_balances: Mapping[str, int] | None = None) -> None:
        self._lock = threading.RLock()
        self._defaults = dict(DEFAULT_BALANCES if default_balances is None else default_balances)
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.issued: dict[str, IssuedOrder] = {}
            self.executions: dict[str, Execution] = {}  # by signature
            self.trigger_orders: dict[str, TriggerOrder] = {
                o.order: copy.deepcopy(o) for o in EXAMPLE_TRIGGER_ORDERS
            }
            self.recurring_orders = RecurringOrders()
            self.balances: dict[tuple[str, str], int] = {}
            self.known_owners: set[str] = set()
            self.requests: dict[str, int] = {}
            self.lookup_tables: dict[str, list[str]] = {}  # issued tables' addresses
            self.fills: list[dict[str, Any]] = []  # every keeper fill, in order
            self.slot = 300_000_000

    # --- counting and accounts ---------------------------------------------
    def count(self, operation: str) -> None:
        with self._lock:
            self.requests[operation] = self.requests.get(operation, 0) + 1

    def _ensure(self, owner: str) -> None:
        if owner not in self.known_owners:
            self.known_owners.add(owner)
            for mint, amount in self._defaults.items():
                self.balances.setdefault((owner, mint), amount)

    def balance(self, owner: str, mint: str) -> int:
        with self._lock:
            self._ensure(owner)
            return self.balances.get((owner, mint), 0)

    def has_account(self, owner: str, mint: str) -> bool:
        """Whether `owner` holds an account of `mint` (its token account exists), even
        an empty one: a swap's output into a mint it holds none of opens it."""
        with self._lock:
            self._ensure(owner)
            return (owner, mint) in self.balances

    def set_balance(self, owner: str, mint: str, amount: int) -> None:
        with self._lock:
            self._ensure(owner)
            self.balances[(owner, mint)] = amount

    def move(
        self, owner: str, debit: tuple[str, int] | None, credit: tuple[str, int] | None
    ) -> bool:
        """Debit then credit `owner` atomically; False (nothing moved) when short."""
        with self._lock:
            self._ensure(owner)
            if debit is not None:
                mint, amount = debit
                if self.balances.get((owner, mint), 0) < amount:
                    return False
                self.balances[(owner, mint)] = self.balances.get((owner, mint), 0) - amount
            if credit is not None:
                mint, amount = credit
                self.balances[(owner, mint)] = self.balances.get((owner, mint), 0) + amount
            return True

    def holdings(self, owner: str) -> dict[str, int]:
        with self._lock:
            self._ensure(owner)
            return {m: a for (o, m), a in sorted(self.balances.items()) if o == owner and a > 0}

    # --- orders and executions ---------------------------------------------
    def issue(self, order: IssuedOrder) -> None:
        with self._lock:
            self.issued[order.request_id] = order

    def get_issued(self, request_id: str) -> IssuedOrder | None:
        with self._lock:
            return self.issued.get(request_id)

    def record(self, execution: Execution) -> None:
        with self._lock:
            self.executions[execution.signature] = execution

    def execution(self, signature: str) -> Execution | None:
        with self._lock:
            return self.executions.get(signature)

    def touching(self, address: str) -> list[Execution]:
        """The landed transactions with `address` among their keys, newest first (the
        order of ``getSignaturesForAddress``)."""
        with self._lock:
            found = [e for e in self.executions.values()
                     if e.landed and address in e.all_accounts]  # fmt: skip
        return sorted(found, key=lambda e: (e.slot, e.at), reverse=True)

    def next_slot(self) -> int:
        with self._lock:
            self.slot += 1
            return self.slot

    def landed(self) -> list[Execution]:
        with self._lock:
            return [e for e in self.executions.values() if e.landed]

    def add_trigger_order(self, order: TriggerOrder) -> None:
        with self._lock:
            if order.maker is not None:
                self._ensure(order.maker)
            self.trigger_orders[order.order] = order

    def open_trigger_order(self, order: str, maker: str) -> TriggerOrder | None:
        """`maker`'s open order `order`; an unowned example order becomes theirs."""
        with self._lock:
            found = self.trigger_orders.get(order)
            if found is None or found.status != "Open" or found.maker not in (None, maker):
                return None
            if found.maker is None:
                self._ensure(maker)
                found.maker = maker
            return found

    def add_recurring_order(self, order: RecurringOrder) -> None:
        with self._lock:
            self.recurring_orders[order.order] = order

    def summary(self) -> dict[str, Any]:
        """The ledger as JSON-ready data (GET /_emulator/ledger)."""
        with self._lock:
            balances: dict[str, dict[str, str]] = {}
            for (owner, mint), amount in sorted(self.balances.items()):
                balances.setdefault(owner, {})[mint] = str(amount)
            issued = []
            for o in self.issued.values():
                item = asdict(o)
                item.pop("message")
                issued.append(item)
            executions = []
            for e in self.executions.values():
                item = asdict(e)
                item.pop("answer")
                executions.append(item)
            return {
                "requests": dict(self.requests),
                "issued": issued,
                "executions": executions,
                "landed": sum(1 for e in self.executions.values() if e.landed),
                "triggerOrders": [asdict(t) for t in self.trigger_orders.values()],
                "recurringOrders": [asdict(r) for r in self.recurring_orders.values()],
                "fills": [dict(f) for f in self.fills],
                "balances": balances,
                "slot": self.slot,
            }
