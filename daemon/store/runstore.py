"""`RunStore` on Core connections: the one way a run reaches the database.

Each call is one transaction on a bare connection with statements built once
(`daemon.store.runs`); no ORM session on the run path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, select

from daemon.store import audit, runs
from daemon.store.engine import begin
from daemon.store.models import Plan
from daemon.store.plans import PLAN_COLUMNS
from daemon.store.port import CapHit, CapWindow, Event, ExecuteValues, Reservation
from daemon.store.records import PlanRecord, RunRecord
from daemon.store.results import record_execute
from daemon.store.types import RunStatus

_PLAN = select(*PLAN_COLUMNS).where(Plan.id == bindparam("b_id"))


class SqlRunStore:
    """The run store on `engine` (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def claim(
        self,
        plan: PlanRecord,
        scheduled_for: datetime,
        *,
        now: datetime,
        trigger: str,
        claimed_by: str | None,
    ) -> RunRecord | None:
        with begin(self.engine) as conn:
            return runs.claim_record(
                conn, plan, scheduled_for, now=now, trigger=trigger, claimed_by=claimed_by
            )

    def load(self, run_id: int) -> RunRecord:
        with begin(self.engine) as conn:
            record = runs.get(conn, run_id)
        if record is None:
            raise LookupError(f"run {run_id} is not in the store")
        return record

    def advance(
        self,
        run: RunRecord,
        status: RunStatus,
        *,
        now: datetime,
        expect: Sequence[RunStatus],
        step: str,
        detail: Mapping[str, Any],
        before: Sequence[Event] = (),
        fields: Mapping[str, Any] | None = None,
    ) -> tuple[RunRecord, bool]:
        with begin(self.engine) as conn:
            return self._advance(conn, run, status, now, expect, step, detail, before, fields)

    @staticmethod
    def _advance(
        conn: Connection,
        run: RunRecord,
        status: RunStatus,
        now: datetime,
        expect: Sequence[RunStatus],
        step: str,
        detail: Mapping[str, Any],
        before: Sequence[Event],
        fields: Mapping[str, Any] | None,
    ) -> tuple[RunRecord, bool]:
        changed = runs.advance(
            conn, run.id, status, now=now, expect=expect, step=step, detail=dict(detail),
            before=before, **(fields or {}),
        )  # fmt: skip
        if changed is not None:
            return runs.moved(run, changed), True
        _record_events(conn, before)
        record = runs.get(conn, run.id)
        if record is None:
            raise LookupError(f"run {run.id} is not in the store")
        return record, False

    def event(self, events: Sequence[Event]) -> None:
        if events:
            with begin(self.engine) as conn:
                _record_events(conn, events)

    def reserve(
        self, run_id: int, reservation: Reservation, caps: Sequence[CapWindow], *, now: datetime
    ) -> CapHit | None:
        with begin(self.engine) as conn:
            audit.lock_spending(conn)
            for cap in caps:
                used = audit.spent(
                    conn, since=cap.since, plan_id=cap.plan_id, input_mint=cap.input_mint,
                    exclude_run=run_id,
                )  # fmt: skip
                if used + reservation.in_amount > cap.limit:
                    return CapHit(cap, used)
            runs.reserve(conn, run_id, reservation)
        return None

    def settle(
        self,
        run_id: int,
        status: RunStatus,
        *,
        now: datetime,
        step: str,
        detail: Mapping[str, Any],
        fields: Mapping[str, Any],
    ) -> RunRecord | None:
        with begin(self.engine) as conn:
            changed = runs.advance(
                conn, run_id, status, now=now, expect=[RunStatus.IN_DOUBT], step=step,
                detail=dict(detail), **fields,
            )  # fmt: skip
            return None if changed is None else runs.get(conn, run_id)

    def record_result(self, values: ExecuteValues) -> None:
        with begin(self.engine) as conn:
            record_execute(conn, values)

    def in_flight(self) -> list[tuple[RunRecord, PlanRecord | None]]:
        with begin(self.engine) as conn:
            found = runs.in_flight(conn)
            plans = {run.plan_id: _plan(conn, run.plan_id) for run in found}
        return [(run, plans[run.plan_id]) for run in found]

    def steps(self, run_id: int) -> list[tuple[str, dict[str, Any]]]:
        with begin(self.engine) as conn:
            return [(step, detail) for _, step, detail in runs.events(conn, run_id)]


def _record_events(conn: Connection, events: Sequence[Event]) -> None:
    """Append events, counting the attempts among them in their runs' `attempts`."""
    if not events:
        return
    bumps: dict[int, int] = {}
    for run_id, step, _, _ in events:
        if step == "attempt":
            bumps[run_id] = bumps.get(run_id, 0) + 1
    for run_id, by in bumps.items():
        runs.bump_attempts(conn, run_id, by)
    runs.add_events(conn, events)


def _plan(conn: Connection, plan_id: int) -> PlanRecord | None:
    row = conn.execute(_PLAN, {"b_id": plan_id}).one_or_none()
    if row is None:
        return None
    try:
        return PlanRecord.from_mapping(row._mapping)
    except ValueError:
        return None
