"""A plan's advisory lock on PostgreSQL, so that a manual fire's "the plan has no run
that has not ended" and every claim of the plan's runs are decided one after another
(`jupcron.store.runwrite`, which writes the runs; this module only locks and reads).

A claim of a run to be ordered takes the lock shared, as a term of its INSERT (one
function call, no statement or round trip of its own: a daemon's burst of claims pays
next to nothing, and shared holders never wait on one another). A manual fire's claim
takes it exclusive before it looks (`unended`). Either one's run is then committed
before the other looks or inserts: a look never misses a claim not yet committed.
SQLite's BEGIN IMMEDIATE already serializes every transaction that writes.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from jupcron.store import runs
from jupcron.store.records import RunRecord

PLAN_LOCK = 0x6A75706C  # "jupl"; the two-key lock space (audit's SPEND_LOCK is one key)
_EXCLUSIVE = sa.text(
    "SELECT pg_advisory_xact_lock(CAST(:b_class AS INTEGER), CAST(:b_plan AS INTEGER))"
)


def shared(plan_id: Any) -> sa.ColumnElement[bool]:
    """A WHERE term that takes the lock of plan `plan_id` (a bound parameter), shared,
    until the transaction ends (always true)."""
    lock = sa.func.pg_advisory_xact_lock_shared(sa.literal_column(str(PLAN_LOCK)), plan_id)
    return lock.is_not(None)


def unended(conn: Connection, plan_id: int) -> RunRecord | None:
    """The plan's oldest run that has not ended, looked for under the plan's lock
    (exclusive: it waits for every claim of the plan's runs not yet committed, and
    holds off the next until this transaction ends); ``None`` if it has none. Run at
    once, through the cursor: a manual fire's claim is a write alone."""
    hold(conn, plan_id)
    found = runs.unsettled(conn, plan_id)
    return found[0] if found else None


def hold(conn: runs.Conn, plan_id: int) -> None:
    """Take plan `plan_id`'s lock exclusive until the transaction ends (PostgreSQL;
    SQLite's write lock already holds every claim off): a claim of its runs in flight
    is committed before this returns, and the next waits for the caller's commit (a
    manual fire about to look for an unended run; an apply that disabled the plan,
    then reads its last fired slot)."""
    if runs._dialect(conn) == "postgresql":
        conn.execute(_EXCLUSIVE, {"b_class": PLAN_LOCK, "b_plan": plan_id})
