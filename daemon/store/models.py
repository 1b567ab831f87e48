"""SQLAlchemy models: plans (with their history), runs, run events, and what the
money did (execute results, swap events, order trades, followed orders, tokens).

The `audit` view (a contract, DESIGN §3) is created by the migrations; its
SQL lives here so migrations and tests share one text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from jupcron.domain import DEFAULT_WALLET
from jupcron.store.types import UTCDateTime

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# amounts are raw base units as decimal text: exact on both backends, never float
AMOUNT = String(40)
PUBKEY = String(64)
WALLET = String(64)  # a configured wallet's name (`jupcron.config.sections.WALLET_NAME`)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON(),
    }


class Plan(Base):
    __tablename__ = "plans"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(32))
    schedule: Mapped[dict[str, Any]]
    request: Mapped[dict[str, Any]]
    settings: Mapped[dict[str, Any]]
    description: Mapped[str | None] = mapped_column(Text)
    source: Mapped[str | None] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer, default=1)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    # the configured wallet (by name) that signs its runs; `default`: wallet.keypair
    wallet: Mapped[str] = mapped_column(WALLET, server_default=DEFAULT_WALLET)
    # the scheduler's (0011_next_fire): the first slot of version `fire_version` not yet
    # fired or recorded, never later than it (NULL: no slot left); `fire_version` behind
    # `version`, or NULL: the plan changed since, and is settled first. Indexed: the
    # scheduler reads the plans due next by it, a page at a time
    next_fire: Mapped[datetime | None] = mapped_column(index=True)
    fire_version: Mapped[int | None] = mapped_column(Integer)


class PlanVersion(Base):
    """Every version a plan has had: what a run at that version was asked to do."""

    __tablename__ = "plan_versions"
    __table_args__ = (UniqueConstraint("plan_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"))
    version: Mapped[int] = mapped_column(Integer)
    content: Mapped[dict[str, Any]]
    content_hash: Mapped[str] = mapped_column(String(64))
    enabled: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime]


class Run(Base):
    """One fire of one plan. UNIQUE (plan_id, scheduled_for): at most one order a slot."""

    __tablename__ = "runs"
    __table_args__ = (
        UniqueConstraint("plan_id", "scheduled_for", name="uq_runs_plan_slot"),
        Index("ix_runs_status", "status"),
        Index("ix_runs_scheduled_for", "scheduled_for"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"))
    plan_version: Mapped[int] = mapped_column(Integer)
    scheduled_for: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(16))
    trigger: Mapped[str] = mapped_column(String(16), default="schedule")
    request_id: Mapped[str | None] = mapped_column(String(128))
    unsigned_tx: Mapped[str | None] = mapped_column(Text)
    signed_tx: Mapped[str | None] = mapped_column(Text)
    signature: Mapped[str | None] = mapped_column(String(100))
    expires_at: Mapped[datetime | None]
    slot: Mapped[int | None] = mapped_column(BigInteger)
    input_mint: Mapped[str | None] = mapped_column(PUBKEY)
    output_mint: Mapped[str | None] = mapped_column(PUBKEY)
    in_amount: Mapped[str | None] = mapped_column(AMOUNT)
    out_amount: Mapped[str | None] = mapped_column(AMOUNT)
    order_account: Mapped[str | None] = mapped_column(PUBKEY)
    error_code: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    # the wallet (its configured name) the run is for, the plan's when it was claimed
    wallet: Mapped[str] = mapped_column(WALLET, server_default=DEFAULT_WALLET)
    # that wallet's keypair (base58 address) when it was claimed, which `safety.caps`
    # count by (a renamed wallet keeps its budget); runs from before 0013_run_owner have
    # the key of the signature their `signed` event recorded (0014, 0015); NULL: they
    # signed nothing, or were claimed by a daemon without that wallet
    owner: Mapped[str | None] = mapped_column(PUBKEY)


class RunEvent(Base):
    """Append-only: every step and attempt of every run."""

    __tablename__ = "run_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    at: Mapped[datetime]
    step: Mapped[str] = mapped_column(String(64))
    detail: Mapped[dict[str, Any]]


class StoreMeta(Base):
    """Small key/value facts, e.g. ``plans_revision`` bumped by every apply."""

    __tablename__ = "store_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class PlanFileMark(Base):
    """Each file of ``plans.dir`` as the last complete `plans apply` read it: its stat
    and the SHA-256 of its bytes (`jupcron status` reads only files whose stat changed;
    ``store_meta`` key ``plan_files`` says at which plans revision, folder and wallets)."""

    __tablename__ = "plan_files"

    path: Mapped[str] = mapped_column(Text, primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    mtime_ns: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))


class ExecuteResultRow(Base):
    """Every execute answer that carried a result, as the API gave it: one per
    (run, signature); a re-post's answer replaces the earlier one."""

    __tablename__ = "execute_results"
    __table_args__ = (UniqueConstraint("run_id", "signature", name="uq_execute_results_run_sig"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    signature: Mapped[str] = mapped_column(String(100))
    operation: Mapped[str] = mapped_column(String(32))
    status: Mapped[str | None] = mapped_column(String(16))
    code: Mapped[str | None] = mapped_column(String(32))
    http_status: Mapped[int | None] = mapped_column(Integer)
    slot: Mapped[int | None] = mapped_column(BigInteger)
    error: Mapped[str | None] = mapped_column(Text)
    order_account: Mapped[str | None] = mapped_column(PUBKEY)
    total_input_amount: Mapped[str | None] = mapped_column(AMOUNT)
    total_output_amount: Mapped[str | None] = mapped_column(AMOUNT)
    input_amount_result: Mapped[str | None] = mapped_column(AMOUNT)
    output_amount_result: Mapped[str | None] = mapped_column(AMOUNT)
    answer: Mapped[dict[str, Any]]
    recorded_at: Mapped[datetime]


class SwapEventRow(Base):
    """``swapEvents[]`` of an execute answer, in order."""

    __tablename__ = "swap_events"
    __table_args__ = (UniqueConstraint("result_id", "position", name="uq_swap_events_position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    result_id: Mapped[int] = mapped_column(ForeignKey("execute_results.id"))
    position: Mapped[int] = mapped_column(Integer)
    amm: Mapped[str | None] = mapped_column(PUBKEY)
    input_mint: Mapped[str] = mapped_column(PUBKEY)
    input_amount: Mapped[str] = mapped_column(AMOUNT)
    output_mint: Mapped[str] = mapped_column(PUBKEY)
    output_amount: Mapped[str] = mapped_column(AMOUNT)


class OrderTrade(Base):
    """A trade of a recurring or trigger order that a run of ours placed or
    manages, stored once: UNIQUE (order_account, tx_id, action)."""

    __tablename__ = "order_trades"
    __table_args__ = (
        UniqueConstraint("order_account", "tx_id", "action", name="uq_order_trades_trade"),
        Index("ix_order_trades_run_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(String(16))  # recurring | trigger
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    order_account: Mapped[str] = mapped_column(PUBKEY)
    tx_id: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(32))
    input_mint: Mapped[str] = mapped_column(PUBKEY)
    in_amount: Mapped[str] = mapped_column(AMOUNT)
    output_mint: Mapped[str] = mapped_column(PUBKEY)
    out_amount: Mapped[str] = mapped_column(AMOUNT)
    fee_mint: Mapped[str | None] = mapped_column(PUBKEY)
    fee_amount: Mapped[str | None] = mapped_column(AMOUNT)
    keeper: Mapped[str | None] = mapped_column(PUBKEY)
    confirmed_at: Mapped[datetime]
    recorded_at: Mapped[datetime]


class FollowedOrder(Base):
    """The last known state of an order of ours, and its fate once closed:
    completed, cancelled (with what the cancel returned) or expired."""

    __tablename__ = "followed_orders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    order_account: Mapped[str] = mapped_column(PUBKEY, unique=True)
    source: Mapped[str] = mapped_column(String(16))
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    state: Mapped[str] = mapped_column(String(16))  # open | held | completed | cancelled | expired
    api_status: Mapped[str | None] = mapped_column(String(32))
    deposited: Mapped[str | None] = mapped_column(AMOUNT)
    used: Mapped[str | None] = mapped_column(AMOUNT)
    received: Mapped[str | None] = mapped_column(AMOUNT)
    refunded: Mapped[str | None] = mapped_column(AMOUNT)
    input_mint: Mapped[str | None] = mapped_column(PUBKEY)  # the refund's mint
    output_mint: Mapped[str | None] = mapped_column(PUBKEY)
    open_tx: Mapped[str | None] = mapped_column(String(100))
    close_tx: Mapped[str | None] = mapped_column(String(100))
    opened_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]
    first_seen_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]


class FollowEvent(Base):
    """Append-only: what the follower saw and every answer it could not use."""

    __tablename__ = "follow_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime]
    step: Mapped[str] = mapped_column(String(64))
    source: Mapped[str | None] = mapped_column(String(16))
    order_account: Mapped[str | None] = mapped_column(PUBKEY)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id"))
    detail: Mapped[dict[str, Any]]


class TokenInfo(Base):
    """A mint's facts: decimals, symbol, name and token program (Jupiter's Tokens V2
    answer; decimals and program checked against the mint account with ``rpc.url``),
    and its last known USD price (decimal text) with when it was read."""

    __tablename__ = "tokens"

    mint: Mapped[str] = mapped_column(PUBKEY, primary_key=True)
    decimals: Mapped[int] = mapped_column(Integer)
    symbol: Mapped[str | None] = mapped_column(String(32))
    source: Mapped[str] = mapped_column(String(16))  # api | chain | api+chain
    fetched_at: Mapped[datetime]
    name: Mapped[str | None] = mapped_column(String(64))
    token_program: Mapped[str | None] = mapped_column(PUBKEY)
    usd_price: Mapped[str | None] = mapped_column(String(40))
    priced_at: Mapped[datetime | None]


class TokenPrice(Base):
    """One USD price read for a mint, at the time it was read (the market over time:
    what a plan's average cost is set against)."""

    __tablename__ = "token_prices"

    mint: Mapped[str] = mapped_column(PUBKEY, primary_key=True)
    at: Mapped[datetime] = mapped_column(primary_key=True)
    usd_price: Mapped[str] = mapped_column(String(40))


class PauseRow(Base):
    """An operator's pause (`jupcron pause`): one plan's slots, or every plan's
    (scope ``*``), are recorded as skipped until `jupcron resume` deletes the row."""

    __tablename__ = "pauses"

    scope: Mapped[str] = mapped_column(String(200), primary_key=True)  # a plan name, or "*"
    reason: Mapped[str | None] = mapped_column(Text)
    paused_by: Mapped[str] = mapped_column(String(128))
    paused_at: Mapped[datetime]


class DaemonNode(Base):
    """A running daemon's heartbeat, written every few seconds (leader and standby
    alike) and removed when it stops cleanly: what `jupcron status` shows."""

    __tablename__ = "daemon_nodes"

    node: Mapped[str] = mapped_column(String(128), primary_key=True)  # host:pid
    role: Mapped[str] = mapped_column(String(16))  # leader | standby
    role_since: Mapped[datetime]
    started_at: Mapped[datetime]
    last_beat: Mapped[datetime]
    dry_run: Mapped[bool] = mapped_column(Boolean)
    kill_switch: Mapped[str | None] = mapped_column(Text)  # why runs are skipped, while on
    version: Mapped[str] = mapped_column(String(32))
    # what it found not working at start and runs without (0007_node_degraded)
    degraded: Mapped[str | None] = mapped_column(Text)
    # the wallets it leads now (0010_shards); NULL: a daemon from before per-wallet leadership
    wallets: Mapped[list[str] | None] = mapped_column(JSON)


class RunwayRow(Base):
    """What the wallet's balance of one mint covers (daemon/scheduling/runway.py), as the leader
    last read it: `jupcron status` and the page show it, a low one is alerted once.
    Amounts are base units as text; ``balance`` and ``runs`` NULL: unknown (``problem``
    says why), never 0."""

    __tablename__ = "runways"

    wallet: Mapped[str] = mapped_column(PUBKEY, primary_key=True)
    mint: Mapped[str] = mapped_column(PUBKEY, primary_key=True)
    symbol: Mapped[str | None] = mapped_column(String(32))
    decimals: Mapped[int | None] = mapped_column(Integer)
    balance: Mapped[str | None] = mapped_column(AMOUNT)
    runs: Mapped[int | None] = mapped_column(Integer)  # upcoming runs covered
    upcoming: Mapped[int] = mapped_column(Integer)  # runs in the horizon
    needed: Mapped[str] = mapped_column(AMOUNT)  # what they all take
    short_at: Mapped[datetime | None]  # the first run not covered
    horizon_s: Mapped[int] = mapped_column(Integer)
    plans: Mapped[list[str]] = mapped_column(JSON)
    low: Mapped[bool] = mapped_column(Boolean)  # under runway.alert_below (alerted once)
    threshold: Mapped[int] = mapped_column(Integer)
    problem: Mapped[str | None] = mapped_column(Text)
    checked_at: Mapped[datetime]


class RateBucket(Base):
    """The API rate budget of one key, shared by every daemon on one PostgreSQL
    (jupcron.store.ratebudget): a token bucket the daemons draw batches from with
    one atomic UPDATE. Times are seconds of the database's clock (one clock for
    every daemon). Keyed by a digest, never the key itself."""

    __tablename__ = "api_rate_buckets"

    bucket: Mapped[str] = mapped_column(String(80), primary_key=True)  # digest:name
    rate: Mapped[float] = mapped_column(Double)  # tokens added per second
    capacity: Mapped[float] = mapped_column(Double)  # at most this many saved up
    tokens: Mapped[float] = mapped_column(Double)  # as of refilled_at
    refilled_at: Mapped[float] = mapped_column(Double)
    blocked_until: Mapped[float] = mapped_column(Double)  # a 429's Retry-After, for all
    granted: Mapped[int] = mapped_column(Integer)  # the last draw's grant
    drawn: Mapped[int] = mapped_column(BigInteger)  # every token ever granted
