"""Read-side queries: the audit trail and the spend sums that caps are checked against."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, or_, select, text
from sqlalchemy.orm import Session

from jupcron.domain import RunStatus
from jupcron.store.models import Plan, Run
from jupcron.store.plansort import in_chunks

# statuses whose input amount has left, may have left, or is about to leave the wallet
SPENDING = (
    RunStatus.PENDING,  # its amount: from its claim (no cap on it), else the pre-flight's
    RunStatus.REQUESTED,
    RunStatus.SIGNED,
    RunStatus.SUBMITTED,
    RunStatus.SUCCEEDED,
    RunStatus.IN_DOUBT,
)

# the `audit` view's columns, in its order (a test keeps the two equal)
AUDIT_COLUMNS = (
    "run_id", "plan_name", "kind", "plan_version", "scheduled_for", "status", "trigger",
    "request_id", "signature", "error_code", "error", "input_mint", "in_amount", "output_mint",
    "out_amount", "order_account", "slot", "attempts", "created_at", "updated_at", "finished_at",
    "spent", "received", "refunded", "fills", "wallet",
)  # fmt: skip
# what the money did (migration 0003_fills): the view's columns, summed here (`_money`)
MONEY_COLUMNS = ("spent", "received", "refunded", "fills")


SPEND_LOCK = 0x6A757063  # "jupc": one PostgreSQL advisory lock for cap checks


def lock_spending(session: Session | Connection) -> None:
    """Serialize cap checks until the transaction ends. SQLite's BEGIN IMMEDIATE
    already serializes writers; PostgreSQL takes a transaction advisory lock."""
    dialect = session.dialect if isinstance(session, Connection) else session.get_bind().dialect
    if dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SPEND_LOCK})


def spent(
    session: Session | Connection,
    *,
    since: datetime,
    input_mint: str | None = None,
    plan_id: int | None = None,
    wallet: str | None = None,
    owner: str | None = None,
    exclude_run: int | None = None,
) -> int:
    """Raw input amount committed by runs spending at some time since `since` (exact
    integer sum): those still in flight, whatever their age, and those that ended since.
    A run counts for when its money may move, not for when it was claimed: one claimed
    a day ago and ordered now (recovered) spends now.

    `owner` (a keypair's address): its runs, under whatever wallet name they were
    claimed (a wallet renamed in the config keeps its budget), and `wallet`'s runs that
    have no owner recorded (from before 0013_run_owner and signed nothing, so 0014 and
    0015 could not tell their key): the money follows the key."""
    stmt = select(Run.in_amount).where(
        or_(Run.finished_at.is_(None), Run.finished_at >= since),
        Run.status.in_([str(s) for s in SPENDING]),
        Run.in_amount.is_not(None),
    )
    if input_mint is not None:
        stmt = stmt.where(Run.input_mint == input_mint)
    if plan_id is not None:
        stmt = stmt.where(Run.plan_id == plan_id)
    if owner is not None:
        of_key = Run.owner == owner
        if wallet is not None:  # a run from before the owner was recorded: by its name
            of_key = or_(of_key, and_(Run.owner.is_(None), Run.wallet == wallet))
        stmt = stmt.where(of_key)
    elif wallet is not None:
        stmt = stmt.where(Run.wallet == wallet)
    if exclude_run is not None:
        stmt = stmt.where(Run.id != exclude_run)
    return sum(int(value) for value in session.scalars(stmt) if value)


@dataclass(frozen=True)
class AuditFilter:
    plan: str | None = None
    status: str | None = None
    kind: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    wallet: str | None = None  # the runs of this wallet (its configured name)


def audit_rows(session: Session, flt: AuditFilter) -> list[dict[str, Any]]:
    """The audit trail, newest first, as plain rows (the `audit` view's columns)."""
    stmt = (
        select(Run, Plan.name, Plan.kind)
        .join(Plan, Plan.id == Run.plan_id)
        .order_by(Run.scheduled_for.desc(), Run.id.desc())
        .limit(flt.limit)
    )
    if flt.plan:
        stmt = stmt.where(Plan.name == flt.plan)
    if flt.status:
        stmt = stmt.where(Run.status == flt.status)
    if flt.kind:
        stmt = stmt.where(Plan.kind == flt.kind)
    if flt.wallet:
        stmt = stmt.where(Run.wallet == flt.wallet)
    if flt.since:
        stmt = stmt.where(Run.scheduled_for >= flt.since)
    if flt.until:
        stmt = stmt.where(Run.scheduled_for < flt.until)
    out: list[dict[str, Any]] = []
    for run, name, kind in session.execute(stmt):
        row = {c: getattr(run, c, None) for c in AUDIT_COLUMNS}
        row.update(run_id=run.id, plan_name=name, kind=kind)
        out.append(row)
    if out:
        found = _money(session, [int(r["run_id"]) for r in out])
        for row in out:
            row.update(found.get(int(row["run_id"]), _NO_MONEY))
    return out


def unknown_wallet(conn: Connection, wallet: str, configured: Collection[str]) -> str | None:
    """Why the ``--wallet`` filter of `audit` and `report` names nothing: no configured
    wallet, no plan and no run has `wallet` (a typo answered an empty list, exit 0, read
    as "no runs", where an unknown ``--plan`` is an error); None when one does (a wallet
    gone from the config still has its runs). Called only after an empty answer: the
    lookups are by a column with no index."""
    if wallet in configured:
        return None
    for column in (Plan.wallet, Run.wallet):
        if conn.execute(select(column).where(column == wallet).limit(1)).first() is not None:
            return None
    with_runs = conn.execute(select(Run.wallet).distinct().order_by(Run.wallet)).scalars()
    names = ", ".join(with_runs) or "none"
    return (
        f"no wallet named {wallet!r}: no run, plan or configured wallet has it "
        f"(wallets with runs: {names})"
    )


# run ids bound in one statement's IN (…): PostgreSQL's protocol carries at most 65,535
# parameters a statement, SQLite's default build 32,766; `--limit` lists up to 100,000
IDS_PER_QUERY = 10_000

_NO_MONEY: dict[str, Any] = {"spent": None, "received": None, "refunded": None, "fills": 0}
_FILLS_OF = text("SELECT run_id, in_amount, out_amount FROM fills WHERE run_id IN :ids")
_REFUNDS_OF = text(
    "SELECT run_id, refunded FROM followed_orders WHERE run_id IN :ids AND refunded IS NOT NULL"
)


def _money(session: Session, ids: list[int]) -> dict[int, dict[str, Any]]:
    """The `audit` view's money columns of these runs, as it defines them (the sums of
    the ``fills`` view's rows and of the followed orders' refunds, NULL where there is
    none), summed exactly here: a u64 above 2^63 - 1 is a double to SQLite's NUMERIC
    (``1.0e+19``), and its SUM of two overflows and stops the query. The ids go
    `IDS_PER_QUERY` at a time (a statement binds only so many)."""
    money: dict[int, dict[str, Any]] = {}
    fills = _FILLS_OF.bindparams(bindparam("ids", expanding=True))
    refunds = _REFUNDS_OF.bindparams(bindparam("ids", expanding=True))
    for part in in_chunks(ids, IDS_PER_QUERY):
        bound = {"ids": part}
        for run_id, in_amount, out_amount in session.execute(fills, bound):
            row = money.setdefault(run_id, dict(_NO_MONEY))
            row["spent"] = str(int(row["spent"] or 0) + int(in_amount))
            row["received"] = str(int(row["received"] or 0) + int(out_amount))
            row["fills"] += 1
        for run_id, refunded in session.execute(refunds, bound):
            row = money.setdefault(run_id, dict(_NO_MONEY))
            row["refunded"] = str(int(row["refunded"] or 0) + int(refunded))
    return money
