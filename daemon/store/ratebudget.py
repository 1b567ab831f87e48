"""The API rate budget per key, shared by the daemons on one PostgreSQL (DESIGN §6).

A token bucket per (key digest, bucket name) in `api_rate_buckets`: tokens come
in at ``rate`` per second up to ``capacity``; a daemon draws a batch with one
atomic ``UPDATE … RETURNING`` (the refill, the grant and the new balance in one
statement; concurrent draws queue on the row, each sees the other's result) and
its pacer spends the batch locally. Time is the database server's clock, one
clock for every daemon (a step back of it restarts the refill from the new reading,
`STEP_BACK`, and ends a hold written before it, `LONGEST_HOLD`). A 429's wait is
written to the row (``blocked_until``), so every daemon on the key holds off, not
only the one that was told.

    budget = SharedBudget(engine, bucket_id(key, "main"), rate=1.0)
    grant = budget.draw(3)    # Grant(tokens=1, wait=0.0), or (0, seconds to wait)
    budget.block(5.0)         # nobody on this key sends for 5 s

The key itself is never stored: `bucket_id` keeps a SHA-256 digest of it. A draw
that finds the database unavailable grants one token and says so once
(`rate_budget_unavailable`): the pacer's own spacing still holds, and the API's
429s are still honoured.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from pydantic import SecretStr
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError

from jupcron.errors import JupcronError
from jupcron.logs.outage import Outage
from jupcron.store.engine import begin
from jupcron.store.prepared import pgdirect_module

log = structlog.get_logger(__name__)

MIN_WAIT = 0.05  # never ask again sooner than this (no busy loop)
WINDOW = 60.0  # seconds: the API's sliding rate-limit window (its docs; the emulator's too)

# how far the refill time may lie ahead of a draw's reading of the clock: a draw reads
# it before it queues on the row, so one queued behind a later draw reads it earlier
# (by that wait: milliseconds); further ahead, the server's clock stepped back, and the
# refill counts from the new reading (it only moved forward: no token came in until
# the clock caught up, every daemon on the key starved for as long as the step)
STEP_BACK = 5.0  # seconds, as written out in `_DRAW`
# how far a hold (a 429's ``blocked_until``) may lie ahead: the pacer never holds longer
# than its `MAX_BLOCK` (120 s), plus `STEP_BACK`; further ahead, the server's clock
# stepped back since it was written (a hold long over, or most of it, kept every daemon
# on the key off for as long as the step): it is over, as written out in `_DRAW` and
# `_BLOCK`
LONGEST_HOLD = 125.0

# the refill and the grant, written out in each SET expression: every one of them
# reads the row as it was; RETURNING sees it as it is now
_DRAW = text("""
WITH c AS (SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8 AS now)
UPDATE api_rate_buckets AS b SET
    tokens = LEAST(:capacity, b.tokens + :rate * GREATEST(0.0, c.now - b.refilled_at))
        - CASE WHEN b.blocked_until > c.now AND b.blocked_until <= c.now + 125.0
            THEN 0 ELSE LEAST(:want, FLOOR(
            LEAST(:capacity, b.tokens + :rate * GREATEST(0.0, c.now - b.refilled_at))))::int END,
    granted = CASE WHEN b.blocked_until > c.now AND b.blocked_until <= c.now + 125.0
            THEN 0 ELSE LEAST(:want, FLOOR(
            LEAST(:capacity, b.tokens + :rate * GREATEST(0.0, c.now - b.refilled_at))))::int END,
    drawn = b.drawn + CASE WHEN b.blocked_until > c.now AND b.blocked_until <= c.now + 125.0
            THEN 0 ELSE LEAST(:want, FLOOR(
            LEAST(:capacity, b.tokens + :rate * GREATEST(0.0, c.now - b.refilled_at))))::int END,
    refilled_at = CASE WHEN b.refilled_at > c.now + 5.0  -- STEP_BACK (a step back)
        THEN c.now ELSE GREATEST(b.refilled_at, c.now) END,
    blocked_until = CASE WHEN b.blocked_until > c.now + 125.0  -- LONGEST_HOLD (a step back)
        THEN 0 ELSE b.blocked_until END,
    rate = :rate,
    capacity = :capacity
FROM c
WHERE b.bucket = :bucket
RETURNING b.granted, b.tokens, b.blocked_until - c.now
""")
# `_DRAW` as libpq takes it (`jupcron.store.pgdirect`: each parameter numbered and
# typed as psycopg would send the values): the BEGIN, the draw and the COMMIT in one
# round trip. Through SQLAlchemy and a psycopg cursor a draw was four round trips and
# over a millisecond of CPU, and a burst draws every few requests.
_DRAW_DIRECT = (
    str(_DRAW.text)
    .replace(":capacity", "$1::float8")
    .replace(":rate", "$2::float8")
    .replace(":want", "$3::int8")
    .replace(":bucket", "$4::varchar")
    .encode()
)
_CREATE = text("""
INSERT INTO api_rate_buckets
    (bucket, rate, capacity, tokens, refilled_at, blocked_until, granted, drawn)
VALUES (:bucket, :rate, :capacity, :capacity,
        EXTRACT(EPOCH FROM clock_timestamp())::float8, 0, 0, 0)
ON CONFLICT (bucket) DO NOTHING
""")
_BLOCK = text("""
WITH c AS (SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8 AS now)
UPDATE api_rate_buckets AS b
SET blocked_until = CASE WHEN b.blocked_until > c.now + 125.0  -- LONGEST_HOLD (a step back)
    THEN c.now + :seconds ELSE GREATEST(b.blocked_until, c.now + :seconds) END
FROM c
WHERE b.bucket = :bucket
""")


def bucket_id(api_key: SecretStr | None, name: str) -> str:
    """The row of ``name``'s bucket for this key: a digest of the key, never the key."""
    secret = api_key.get_secret_value() if api_key is not None else ""
    digest = hashlib.sha256(f"jupcron-rate-budget\x00{secret}".encode()).hexdigest()
    return f"{digest}:{name}"[:80]


@dataclass(frozen=True)
class Grant:
    tokens: int  # granted now, to spend at once
    wait: float  # when none: seconds until the next token (or the block's end)


class SharedBudget:
    """One bucket's row, drawn from by this process (any thread)."""

    def __init__(self, engine: Engine, bucket: str, *, rate: float, capacity: float) -> None:
        if rate <= 0 or capacity < 1:
            raise ValueError("a shared budget needs rate > 0 and capacity >= 1")
        self.engine = engine
        self.bucket = bucket
        self.rate = rate
        self.capacity = capacity
        self._outage = Outage(log, "rate_budget_unavailable", back="rate_budget_back")
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SharedBudget(bucket={self.bucket[:12]}…, rate={self.rate})"

    def _params(self, want: int) -> dict[str, object]:
        return {"bucket": self.bucket, "rate": self.rate, "capacity": self.capacity,
                "want": max(1, want)}  # fmt: skip

    def draw(self, want: int) -> Grant:
        """Take up to ``want`` tokens (at least one is asked for)."""
        params = self._params(want)
        try:
            with begin(self.engine) as conn:
                row = _draw_direct(conn, params)
                if row is None:
                    row = conn.execute(_DRAW, params).first()
                if row is None:
                    conn.execute(_CREATE, params)
                    row = conn.execute(_DRAW, params).first()
        except (JupcronError, SQLAlchemyError) as exc:
            with self._lock:
                self._outage.failed(error=str(exc), fallback="local")
            return Grant(1, 0.0)
        with self._lock:
            self._outage.ok()
        assert row is not None
        granted, tokens, blocked_for = int(row[0]), float(row[1]), float(row[2])
        if granted:
            return Grant(granted, 0.0)
        if blocked_for > 0:
            return Grant(0, max(blocked_for, MIN_WAIT))
        return Grant(0, max((1.0 - tokens) / self.rate, MIN_WAIT))

    def block(self, seconds: float) -> None:
        """Nobody on this key sends for ``seconds`` from now (a 429, an empty window)."""
        if seconds <= 0:
            return
        try:
            with begin(self.engine) as conn:
                conn.execute(_BLOCK, {"bucket": self.bucket, "seconds": seconds})
        except (JupcronError, SQLAlchemyError) as exc:
            log.warning("rate_budget_unavailable", error=str(exc), fallback="local")


def _draw_direct(conn: Connection, params: dict[str, object]) -> Sequence[Any] | None:
    """`_DRAW` through libpq, committed in its round trip; its row. ``None`` where
    that path is not open (not psycopg, or settings a plain ``BEGIN`` would not give)
    or the bucket has no row yet: the caller then draws through SQLAlchemy."""
    if conn.dialect.driver != "psycopg":
        return None
    pgdirect = pgdirect_module()
    pooled = conn.connection
    if not pgdirect.usable(pooled.dbapi_connection):
        return None
    values = [params["capacity"], params["rate"], params["want"], params["bucket"]]
    try:
        (rows,) = pgdirect.pipeline(
            pooled.info, pooled.dbapi_connection, [(_DRAW_DIRECT, values)], commit=True
        )
    except Exception as exc:  # raised as SQLAlchemy raises driver errors
        conn._handle_dbapi_exception(exc, _DRAW_DIRECT.decode(), None, None, None)
        raise  # not reached: the handler raises
    return rows[0] if rows else None


def capacity_for(rate: float, window: float) -> float:
    """How many tokens a bucket refilled at ``rate`` (the limit less the pacer's 1%)
    may save up, so that no ``window`` of the API's sliding limit sees more than the
    limit: a burst of C then ``rate`` per second stays under ``limit × window`` while
    C ≤ (limit − rate) × window ≈ rate × window / 100. At least one token: one
    request then ``rate`` per second never exceeds a limit of any window (as the
    local pacer's spacing)."""
    return float(max(1, math.floor(rate * window / 100)))


def shared_budgets(
    engine: Engine, api_key: SecretStr | None, *, window: float = WINDOW
) -> Callable[[str, float], SharedBudget] | None:
    """The factory of the key's shared buckets on PostgreSQL (``None`` on SQLite: one
    daemon, its own pacer); each bucket saves up `capacity_for` its rate."""
    if engine.dialect.name != "postgresql":
        return None

    def budget(name: str, rate: float) -> SharedBudget:
        return SharedBudget(engine, bucket_id(api_key, name), rate=rate,
                            capacity=capacity_for(rate, window))  # fmt: skip

    return budget
