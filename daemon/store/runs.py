"""Reads of runs and their events (each takes a session or a connection).

Nothing here writes: a run is written only through the run store port
(`jupcron.store.runstore`, whose statements are in `jupcron.store.runwrite`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Select, Table, bindparam, func, select
from sqlalchemy.orm import Session

from jupcron.domain import TRIGGER_V2, RunStatus
from jupcron.store.models import Plan, Run, RunEvent
from jupcron.store.records import RunRecord
from jupcron.store.types import UTCDateTime

RUNS = cast(Table, Run.__table__)
EVENTS = cast(Table, RunEvent.__table__)
Conn = Connection | Session
VAULT_SCAN = 50  # a wallet's latest signed Trigger V2 runs looked at for its vault

_GET = select(*RUNS.c).where(RUNS.c.id == bindparam("b_id"))


def _dialect(conn: Conn) -> str:
    if isinstance(conn, Session):
        return conn.get_bind().dialect.name
    return conn.dialect.name


def get(session: Conn, run_id: int) -> RunRecord | None:
    row = session.execute(_GET, {"b_id": run_id}).one_or_none()
    return RunRecord.from_mapping(row._mapping) if row is not None else None


_IN_FLIGHT = (
    select(*RUNS.c)
    .where(RUNS.c.status.in_([str(s) for s in RunStatus if s.in_flight]))
    .order_by(RUNS.c.id)
)


def in_flight(session: Conn) -> list[RunRecord]:
    """Runs not yet final: what recovery looks at after a restart."""
    return [RunRecord.from_mapping(row._mapping) for row in session.execute(_IN_FLIGHT)]


def unsettled(session: Conn, plan_id: int) -> list[RunRecord]:
    """The plan's runs that have not ended (in flight, or ``in_doubt``: each may still
    buy, or may have bought), oldest first, whoever drives them."""
    statuses = [str(s) for s in RunStatus if s.in_flight or s is RunStatus.IN_DOUBT]
    query = (
        select(*RUNS.c)
        .where(RUNS.c.plan_id == plan_id, RUNS.c.status.in_(statuses))
        .order_by(RUNS.c.id)
    )
    return [RunRecord.from_mapping(row._mapping) for row in session.execute(query)]


def last_slot(session: Session, plan_id: int) -> datetime | None:
    """The latest scheduled (not manual) slot recorded for a plan."""
    return session.scalars(
        select(Run.scheduled_for)
        .where(Run.plan_id == plan_id, Run.trigger != "manual")
        .order_by(Run.scheduled_for.desc())
        .limit(1)
    ).first()


def last_slots(session: Session) -> dict[int, datetime]:
    """Every plan's latest scheduled (not manual) slot, in one query."""
    latest = func.max(Run.scheduled_for, type_=UTCDateTime())
    rows = session.execute(
        select(Run.plan_id, latest).where(Run.trigger != "manual").group_by(Run.plan_id)
    )
    return {plan_id: slot for plan_id, slot in rows if slot is not None}


def last_status(session: Session, plan_id: int) -> str | None:
    return session.scalar(
        select(Run.status).where(Run.plan_id == plan_id).order_by(Run.id.desc()).limit(1)
    )


def events(session: Conn, run_id: int) -> list[tuple[datetime, str, dict[str, Any]]]:
    rows = session.execute(
        select(EVENTS.c.at, EVENTS.c.step, EVENTS.c.detail)
        .where(EVENTS.c.run_id == run_id)
        .order_by(EVENTS.c.id)
    )
    return [(at, step, dict(detail)) for at, step, detail in rows]


_V2_SIGNED = (
    select(EVENTS.c.detail)
    .join(RUNS, RUNS.c.id == EVENTS.c.run_id)
    .join(Plan, Plan.id == RUNS.c.plan_id)
    .where(
        EVENTS.c.step == "ordered",
        RUNS.c.signature.is_not(None),
        Plan.kind.in_([str(kind) for kind in TRIGGER_V2]),
    )
    .order_by(EVENTS.c.id.desc())
)
_V2_ORDERED = _V2_SIGNED.where(RUNS.c.wallet == bindparam("b_wallet")).limit(VAULT_SCAN)
# the keypair's latest, under any name: JSON ``detail.owner`` (json_extract on SQLite,
# ->> on PostgreSQL); one row, so the scan stops at the first match
_V2_OWNED = _V2_SIGNED.where(EVENTS.c.detail["owner"].as_string() == bindparam("b_owner")).limit(1)


def trigger_v2_vault(session: Conn, wallet: str, owner: str) -> str | None:
    """The Trigger V2 vault the keypair `owner` was ordered with (the ``vault`` of the
    `ordered` event of its latest signed Trigger V2 run); None if it has none.

    A wallet has one vault, and it is the keypair's, not the configured name's: the
    latest `VAULT_SCAN` signed runs of `wallet` (its name) are looked at first, then,
    when none of them is the keypair's (a wallet renamed in the config, the same
    keypair), its latest signed run under any name; else a renamed wallet's first
    session would trust whatever vault the API names."""
    for (detail,) in session.execute(_V2_ORDERED, {"b_wallet": wallet}):
        vault = _vault_of(detail, owner)
        if vault is not None:
            return vault
    for (detail,) in session.execute(_V2_OWNED, {"b_owner": owner}):
        return _vault_of(detail, owner)
    return None


def _vault_of(detail: Any, owner: str) -> str | None:
    if not isinstance(detail, dict) or detail.get("owner") != owner:
        return None
    vault = detail.get("vault")
    return vault if isinstance(vault, str) else None


def count_status_stmt(status: RunStatus) -> Select[int]:
    return select(func.count()).select_from(Run).where(Run.status == str(status))
