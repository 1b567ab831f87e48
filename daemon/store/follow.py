"""The order follower's store functions: which orders are ours (and the run each
belongs to), trades stored once, the last state of each order, its events.

"Ours": a recurring order a run of a recurring plan created (its order
account, or failing that its open transaction = the run's signature), or the
trigger order a trigger-cancel plan's run manages. Anything else is foreign.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, TypeVar, cast

from sqlalchemy import Insert, Select, Table, Text, and_, or_, select
from sqlalchemy import cast as sql_cast

from jupcron.domain import PlanKind, RunStatus
from jupcron.store.engine import dialect_insert
from jupcron.store.models import FollowedOrder, FollowEvent, OrderTrade, Plan, PlanVersion, Run
from jupcron.store.runs import Conn, _dialect

TRADES = cast(Table, OrderTrade.__table__)
ORDERS = cast(Table, FollowedOrder.__table__)
EVENTS = cast(Table, FollowEvent.__table__)
_S = TypeVar("_S", bound=Select[Any])
OPEN = "open"
HELD = "held"  # no longer trading, its funds in custody until withdrawn: still followed
CLOSED_STATES = frozenset({"completed", "cancelled", "expired"})

# runs whose order is followed: a recurring order exists once its create landed; a
# trigger cancel manages its order from the moment it may have been sent
_STATUSES = {
    "recurring": (RunStatus.SUCCEEDED, RunStatus.IN_DOUBT),
    # a cancel that found its order already gone (skipped, order_gone, with its account)
    "trigger": (
        RunStatus.SUCCEEDED,
        RunStatus.FAILED,
        RunStatus.IN_DOUBT,
        RunStatus.SUBMITTED,
        RunStatus.SKIPPED,
    ),
}
# the plan kinds whose runs' orders each source follows (a recurring cancel's order too:
# it may have been opened elsewhere, and its refund is the plan's)
_KINDS = {
    "recurring": (str(PlanKind.RECURRING), str(PlanKind.RECURRING_CANCEL)),
    "trigger": (str(PlanKind.TRIGGER_CANCEL), str(PlanKind.TRIGGER_CANCEL_BATCH)),
}


@dataclass(frozen=True)
class Span:
    """When a recurring run's order should be done: its rounds start at `start_at`
    (None: when the order was made) and take `length` in all, numberOfOrders x
    interval (the recurring docs' "total time to complete")."""

    start_at: datetime | None
    length: timedelta


@dataclass(frozen=True)
class Targets:
    """Our orders of one source: order account -> run, open tx -> run; and the span
    of each recurring run whose plan says one (run -> span)."""

    by_order: dict[str, int]
    by_open_tx: dict[str, int]
    spans: dict[int, Span] = field(default_factory=dict)

    def run_for(self, order_account: str, open_tx: str | None) -> int | None:
        """The run an order is put against: the run whose transaction opened it (a
        recurring create known only by its signature: its maker, over a cancel that
        names the account), else the run that names its account."""
        if open_tx and open_tx in self.by_open_tx:
            return self.by_open_tx[open_tx]
        return self.by_order.get(order_account)


@dataclass(frozen=True)
class TradeValues:
    source: str
    run_id: int
    order_account: str
    tx_id: str
    action: str
    input_mint: str
    in_amount: str
    output_mint: str
    out_amount: str
    confirmed_at: datetime
    fee_mint: str | None = None
    fee_amount: str | None = None
    keeper: str | None = None


@dataclass(frozen=True)
class OrderValues:
    order_account: str
    source: str
    run_id: int
    state: str  # open | completed | cancelled | expired
    api_status: str | None = None
    deposited: str | None = None
    used: str | None = None
    received: str | None = None
    refunded: str | None = None
    open_tx: str | None = None
    close_tx: str | None = None
    opened_at: datetime | None = None
    closed_at: datetime | None = None
    input_mint: str | None = None  # the deposit's (and so a refund's) mint
    output_mint: str | None = None


def targets(
    conn: Conn, source: str, wallet: str | None = None, address: str | None = None
) -> Targets:
    """Our orders of `source` (``recurring`` | ``trigger``), those of `wallet`'s runs
    (its configured name) when given: with its keypair's `address`, the runs that
    keypair signed under any name (a renamed wallet's orders are still in its
    listings), and of the runs that signed nothing, those of the name.

    The run that made a recurring order wins (its fills and its refund are its
    plan's, whatever a cancel of it did), then a succeeded run, then the earliest. A
    run's orders are those of the plan version it was claimed under
    (`claimed_request`)."""
    statuses = [str(s) for s in _STATUSES[source]]
    stmt = (
        select(
            Run.id,
            Run.order_account,
            Run.signature,
            Run.status,
            Plan.kind,
            Plan.request,
            PlanVersion.content,
        )
        .join(Plan, Plan.id == Run.plan_id)
        .outerjoin(PlanVersion, CLAIMED_VERSION)
        .where(Plan.kind.in_(_KINDS[source]), Run.status.in_(statuses))
        .order_by(Run.id)
    )
    rows = list(conn.execute(of_wallet(stmt, wallet, address)))
    maker = str(PlanKind.RECURRING)
    rows.sort(key=lambda r: (r.kind != maker, r.status != str(RunStatus.SUCCEEDED), r.id))
    by_order: dict[str, int] = {}
    by_tx: dict[str, int] = {}
    spans: dict[int, Span] = {}
    for row in rows:
        request = claimed_request(row.content, row.request)
        if (span := _span(request)) is not None:  # a create's request says its span
            spans[row.id] = span
        account = row.order_account
        skipped = row.status == str(RunStatus.SKIPPED)  # followed only with its account
        fallback = source == "trigger" and not skipped and isinstance(request, dict)
        if account is None and fallback:
            account = request.get("order")  # a cancel that failed before ordering
        batch = request.get("orders") if fallback else None  # a batch cancel's orders
        for named in [account, *(batch if isinstance(batch, list) else [])]:
            if isinstance(named, str) and named:
                by_order.setdefault(named, row.id)
        if not account and source == "recurring" and row.signature:  # account unknown (in doubt)
            by_tx.setdefault(row.signature, row.id)
    return Targets(by_order, by_tx, spans)


# the plan version a run was claimed under (outer-joined: runs from before versions
# were stored have none)
CLAIMED_VERSION = and_(PlanVersion.plan_id == Run.plan_id, PlanVersion.version == Run.plan_version)


def of_wallet(stmt: _S, wallet: str | None, address: str | None) -> _S:
    """`stmt` (a select of runs) narrowed to `wallet`'s runs, when given: with its
    keypair's `address`, the runs that keypair signed under any name (a wallet renamed
    in the config keeps its orders, which are in its keypair's listings) and, of the
    runs that signed nothing, those of the name; without it, the name's."""
    if wallet is None:
        return stmt
    if address is None:
        return stmt.where(Run.wallet == wallet)
    unsigned = and_(Run.owner.is_(None), Run.wallet == wallet)
    return stmt.where(or_(Run.owner == address, unsigned))


def claimed_request(content: Any, current: Any) -> Any:
    """The request of the plan version a run was claimed under (``plan_versions``): the
    orders it cancels, the span of the order it made. Not the plan's request as it is
    now: an apply that edits a cancel plan's orders must not hand them to its earlier
    runs (nor take theirs away). The current one only where no version was stored."""
    request = content.get("request") if isinstance(content, dict) else None
    return request if isinstance(request, dict) else current


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _span(request: Any) -> Span | None:
    """A recurring request's ``params.time`` span; None when it does not say one."""
    params = request.get("params") if isinstance(request, dict) else None
    time = params.get("time") if isinstance(params, dict) else None
    if not isinstance(time, dict):
        return None
    orders, interval = _whole(time.get("numberOfOrders")), _whole(time.get("interval"))
    if orders is None or interval is None:
        return None
    start = _whole(time.get("startAt"))
    try:
        start_at = datetime.fromtimestamp(start, UTC) if start is not None else None
        return Span(start_at, timedelta(seconds=orders * interval))
    except (OverflowError, OSError, ValueError):
        return None  # a span beyond the calendar says nothing we could compare


def _chunks(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def last_known(
    conn: Conn, source: str, keys: Collection[str], ours: Targets
) -> dict[str, datetime]:
    """When each of `keys` (our order accounts or open transactions) was last known to
    exist: the last poll that saw it listed, else the end of the run that made (or
    cancels) it. A key with neither is left out."""
    wanted = sorted(set(keys))
    found: dict[str, datetime] = {}
    for chunk in _chunks(wanted):
        rows = conn.execute(
            select(ORDERS.c.order_account, ORDERS.c.open_tx, ORDERS.c.last_seen_at).where(
                ORDERS.c.source == source,
                or_(ORDERS.c.order_account.in_(chunk), ORDERS.c.open_tx.in_(chunk)),
            )
        )
        for account, open_tx, seen_at in rows:
            for key in (account, open_tx):
                if key in keys and (key not in found or found[key] < seen_at):
                    found[key] = seen_at
    runs = {key: ours.run_for(key, key) for key in wanted if key not in found}
    ended: dict[int, datetime] = {}
    for chunk in _chunks(sorted({r for r in runs.values() if r is not None})):
        stmt = select(Run.id, Run.finished_at, Run.updated_at).where(Run.id.in_(chunk))
        ended.update({row.id: row.finished_at or row.updated_at for row in conn.execute(stmt)})
    found.update({key: ended[run] for key, run in runs.items() if run in ended})
    return found


def told(conn: Conn, source: str, step: str) -> set[str]:
    """The keys (``detail.key``) that `step` events of `source` already named: what the
    follower says of an order, it says once."""
    rows = conn.execute(
        select(EVENTS.c.detail).where(EVENTS.c.step == step, EVENTS.c.source == source)
    )
    return {
        key for (detail,) in rows
        if isinstance(detail, dict) and isinstance(key := detail.get("key"), str)
    }  # fmt: skip


def landed_evidence(conn: Conn, run_id: int) -> str | None:
    """What the followed orders show of run `run_id`'s transaction: it opened or closed
    an order (or made one of the run's trades), so it landed; None: nothing. Any
    followed order: one a cancel closed may be put against the run that made it."""
    signature = conn.execute(select(Run.signature).where(Run.id == run_id)).scalar_one_or_none()
    if not signature:
        return None
    for account, open_tx, close_tx in conn.execute(
        select(ORDERS.c.order_account, ORDERS.c.open_tx, ORDERS.c.close_tx).where(
            or_(ORDERS.c.open_tx == signature, ORDERS.c.close_tx == signature)
        )
    ):
        if signature in (open_tx, close_tx):
            verb = "opened" if signature == open_tx else "closed"
            return f"the follower found order {account}, which signature {signature} {verb}"
    account = conn.execute(
        select(TRADES.c.order_account).where(TRADES.c.run_id == run_id, TRADES.c.tx_id == signature)
    ).scalar()
    if account is not None:
        return f"the follower found a trade of order {account} in signature {signature}"
    return None


def closed_orders(conn: Conn, source: str) -> set[str]:
    """Order accounts (and open transactions) of our orders known to be closed."""
    rows = conn.execute(
        select(ORDERS.c.order_account, ORDERS.c.open_tx).where(
            ORDERS.c.source == source, ORDERS.c.state.in_(sorted(CLOSED_STATES))
        )
    )
    return {key for row in rows for key in row if key}


@cache
def _insert_trades(dialect: str) -> Insert:
    insert = dialect_insert(dialect)
    return cast(
        Insert,
        insert(TRADES)
        .on_conflict_do_nothing(index_elements=["order_account", "tx_id", "action"])
        .returning(TRADES.c.id),
    )


def store_trades(conn: Conn, trades: Sequence[TradeValues], *, now: datetime) -> int:
    """Insert the trades not stored yet (UNIQUE order, tx, action); how many were new."""
    new = 0
    statement = _insert_trades(_dialect(conn))
    for trade in trades:
        values = {**trade.__dict__, "recorded_at": now}
        if conn.execute(statement, values).first() is not None:
            new += 1
    return new


def move_trades(conn: Conn, order_account: str, run_id: int) -> None:
    """Put the stored trades of `order_account` against `run_id`, the run the follower
    now puts the order against (one opened elsewhere, named first by a cancel that
    failed, then by one that withdrew it): its fills go with its refund."""
    conn.execute(
        TRADES.update()
        .where(TRADES.c.order_account == order_account, TRADES.c.run_id != run_id)
        .values(run_id=run_id)
    )


def save_order(conn: Conn, order: OrderValues, *, now: datetime) -> str | None:
    """Record the order's state; a closed order stays closed. Its previous state."""
    row = conn.execute(
        select(ORDERS.c.id, ORDERS.c.state).where(ORDERS.c.order_account == order.order_account)
    ).one_or_none()
    values: dict[str, Any] = {**order.__dict__, "last_seen_at": now}
    if row is None:
        conn.execute(ORDERS.insert(), {**values, "first_seen_at": now})
        return None
    if row.state in CLOSED_STATES:
        return str(row.state)
    conn.execute(ORDERS.update().where(ORDERS.c.id == row.id).values(values))
    return str(row.state)


def add_event(
    conn: Conn,
    step: str,
    detail: dict[str, Any],
    *,
    at: datetime,
    source: str | None = None,
    order_account: str | None = None,
    run_id: int | None = None,
) -> None:
    conn.execute(
        EVENTS.insert(),
        {
            "at": at,
            "step": step,
            "detail": detail,
            "source": source,
            "order_account": order_account,
            "run_id": run_id,
        },
    )


# the rows that say what the follower could not read (a page or a token call that
# failed, an answer it could not use): a few each poll for as long as an outage
# lasts, so kept `FAILURES_KEPT_FOR` only (the log has them too). What it saw of the
# orders (their closes, the held, overdue and unaccounted notices) is kept for good.
FAILURE_STEPS = (
    "follow_page_failed",
    "follow_bad_page",
    "follow_answer_invalid",
    "follow_too_many_pages",
    "token_facts_failed",
)
FAILURES_KEPT_FOR = timedelta(days=7)


def prune_failures(conn: Conn, *, now: datetime) -> None:
    """Delete the failure rows (`FAILURE_STEPS`) older than `FAILURES_KEPT_FOR`."""
    conn.execute(
        EVENTS.delete().where(
            EVENTS.c.step.in_(FAILURE_STEPS), EVENTS.c.at < now - FAILURES_KEPT_FOR
        )
    )


def events(conn: Conn, step: str | None = None) -> list[dict[str, Any]]:
    stmt = select(EVENTS).order_by(EVENTS.c.id)
    if step is not None:
        stmt = stmt.where(EVENTS.c.step == step)
    return [dict(r._mapping) for r in conn.execute(stmt)]


def plan_mints(conn: Conn) -> set[str]:
    """Every mint the plans and runs use (for token facts)."""
    mints: set[str] = set()
    # the distinct requests as text, decoded here: 100,000 plans often share a few
    for text in conn.execute(select(sql_cast(Plan.request, Text)).distinct()).scalars():
        try:
            request = json.loads(text) if text else None
        except ValueError:
            continue
        if isinstance(request, dict):
            mints.update(
                m for k in ("inputMint", "outputMint") if isinstance(m := request.get(k), str)
            )
    for a, b in conn.execute(select(Run.input_mint, Run.output_mint).distinct()):
        mints.update(m for m in (a, b) if m)
    for a, b in conn.execute(select(ORDERS.c.input_mint, ORDERS.c.output_mint).distinct()):
        mints.update(m for m in (a, b) if m)
    for a, b in conn.execute(select(TRADES.c.input_mint, TRADES.c.output_mint).distinct()):
        mints.update(m for m in (a, b) if m)
    return mints
