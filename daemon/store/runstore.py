"""`RunStore` on Core connections: the one way a run reaches the database.

Every write of a run (its claim, a skipped slot, each step, its events and
execute results) goes through `SqlRunStore`; its statements are in
`jupcron.store.runwrite`, which nothing else imports. No ORM session on the run
path. Writes go through a `GroupCommit` (`jupcron.store.group`): the workers'
writes of one moment share a transaction, and each call returns once its own
write is committed. `group_commit=False` gives each write its own transaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields as dataclass_fields
from datetime import datetime
from functools import partial
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, Engine, bindparam, select

from jupcron.domain import DEFAULT_WALLET, RunStatus
from jupcron.store import audit, control, firing, runbatch, runs, runwrite
from jupcron.store.engine import begin
from jupcron.store.group import GroupCommit
from jupcron.store.models import Plan, PlanVersion
from jupcron.store.plans import PLAN_COLUMNS
from jupcron.store.port import (
    PAUSE_TTL,
    CapHit,
    CapWindow,
    Event,
    ExecuteValues,
    Pause,
    Reservation,
)
from jupcron.store.records import PlanRecord, RunRecord
from jupcron.store.steps import Steps, at_once

# a transaction's writes: stepped side by side, their events in at its end
_execute = partial(runbatch.execute, deferred=runwrite.deferred_events)
_PLAN = select(*PLAN_COLUMNS).where(Plan.id == bindparam("b_id"))
T = TypeVar("T")


class SqlRunStore:
    """The run store on `engine` (SQLite or PostgreSQL)."""

    def __init__(
        self,
        engine: Engine,
        *,
        group_commit: bool = True,
        pause_ttl: float = PAUSE_TTL,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.group = GroupCommit(engine, execute=_execute) if group_commit else None
        self._pause_ttl = pause_ttl
        self._monotonic = monotonic
        self._pauses: list[Pause] = []
        self._pauses_read = float("-inf")
        self._pauses_lock = threading.Lock()

    def _write(self, fn: Callable[[Connection], Steps[T]]) -> T:
        """`fn` in a committed transaction (shared with other threads' writes)."""
        if self.group is not None:
            return cast(T, self.group.run(fn))  # runbatch.execute runs the steps
        with begin(self.engine) as conn:
            result: T = _execute(conn, [fn])[0]
            return result

    def claim(
        self,
        plan: PlanRecord,
        scheduled_for: datetime,
        *,
        now: datetime,
        trigger: str,
        claimed_by: str | None,
        detail: Mapping[str, Any] | None = None,
        spends: Reservation | None = None,
        owner: str | None = None,
        alone: bool = False,
    ) -> RunRecord | None:
        claim = partial(
            runwrite.claim_steps, plan=plan, scheduled_for=scheduled_for, now=now,
            trigger=trigger, claimed_by=claimed_by, detail=detail, spends=spends,
            owner=owner, alone=alone,
        )  # fmt: skip
        return self._write(claim)

    def skip(
        self, plan: PlanRecord, slots: Sequence[datetime], *, now: datetime, error: str
    ) -> list[datetime]:
        def write(conn: Connection) -> Steps[list[datetime]]:
            taken = []
            for slot in slots:
                claim = runwrite.claim_steps(
                    conn, plan, slot, now=now, status=RunStatus.SKIPPED, error=error
                )
                if (yield from claim) is not None:
                    taken.append(slot)
            return taken

        return self._write(write) if slots else []

    def set_next(self, slots: Mapping[int, tuple[datetime | None, int]]) -> None:
        if slots:
            self._write(partial(at_once, partial(firing.set_next, slots=dict(slots))))

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
        results: Sequence[ExecuteValues] = (),
        match: Mapping[str, Any] | None = None,
    ) -> tuple[RunRecord, bool]:
        def write(conn: Connection) -> Steps[tuple[RunRecord, bool]]:
            yield from _keep_results(conn, results)
            changed = yield from runwrite.advance_steps(
                conn, run.id, status, now=now, expect=expect, step=step, detail=detail,
                before=before, fields=fields, match=match,
            )  # fmt: skip
            if changed is not None:
                return _moved(run, changed), True
            yield from runwrite.record_events_steps(conn, before, wait=True)  # read below
            record = runs.get(conn, run.id)
            if record is None:
                raise LookupError(f"run {run.id} is not in the store")
            return record, False

        return self._write(write)

    def event(self, events: Sequence[Event], results: Sequence[ExecuteValues] = ()) -> None:
        def write(conn: Connection) -> Steps[None]:
            yield from _keep_results(conn, results)
            yield from runwrite.record_events_steps(conn, events)

        if events or results:
            self._write(write)

    def reserve(
        self, run_id: int, reservation: Reservation, caps: Sequence[CapWindow], *,
        now: datetime, owner: str,
    ) -> CapHit | None:  # fmt: skip
        reserve = partial(_reserve, run_id=run_id, reservation=reservation, caps=caps,
                          owner=owner)  # fmt: skip
        return self._write(partial(at_once, reserve))

    def cap_hit(
        self, run_id: int, reservation: Reservation, caps: Sequence[CapWindow]
    ) -> CapHit | None:
        with begin(self.engine) as conn:
            return _first_hit(conn, run_id=run_id, reservation=reservation, caps=caps)

    def in_flight(self) -> list[tuple[RunRecord, PlanRecord | None]]:
        with begin(self.engine) as conn:
            found = runs.in_flight(conn)
            plans = {run.plan_id: _plan(conn, run.plan_id) for run in found}
        return [(run, plans[run.plan_id]) for run in found]

    def plan(self, plan_id: int) -> PlanRecord | None:
        with begin(self.engine) as conn:
            return _plan(conn, plan_id)

    def claimed_plan(self, run: RunRecord) -> PlanRecord | None:
        with begin(self.engine) as conn:
            return _claimed_plan(conn, run)

    def steps(self, run_id: int) -> list[tuple[str, dict[str, Any]]]:
        with begin(self.engine) as conn:
            return [(step, detail) for _, step, detail in runs.events(conn, run_id)]

    def trigger_v2_vault(self, wallet: str, owner: str) -> str | None:
        with begin(self.engine) as conn:
            return runs.trigger_v2_vault(conn, wallet, owner)

    def pause_of(self, plan_name: str) -> Pause | None:
        """One small read of the pauses table per `pause_ttl` seconds, whatever the
        number of runs: a pause reaches every run that starts `pause_ttl` after it.
        If the store cannot be read the error goes up (the run stays pending, for
        recovery): a pause is never missed for want of a read."""
        with self._pauses_lock:
            began = self._monotonic()
            if began - self._pauses_read >= self._pause_ttl:
                with begin(self.engine) as conn:
                    self._pauses = control.pauses(conn)
                # dated by when the read began, not ended: a slow read's snapshot may
                # predate a pause by as long as it took
                self._pauses_read = began
            found = self._pauses
        return control.pause_in_effect(found, plan_name)


def _reserve(
    conn: Connection, *, run_id: int, reservation: Reservation, caps: Sequence[CapWindow],
    owner: str,
) -> CapHit | None:  # fmt: skip
    """The caps checked under the spend lock, then the reservation written (or not)."""
    audit.lock_spending(conn)
    hit = _first_hit(conn, run_id=run_id, reservation=reservation, caps=caps)
    if hit is None:
        runwrite.reserve(conn, run_id, reservation, owner)
    return hit


def _first_hit(
    conn: Connection, *, run_id: int, reservation: Reservation, caps: Sequence[CapWindow]
) -> CapHit | None:
    """The first of `caps` that `reservation` would take past its limit, counting what
    the other runs committed (`audit.spent`), or None."""
    for cap in caps:
        used = audit.spent(
            conn, since=cap.since, plan_id=cap.plan_id, input_mint=cap.input_mint,
            wallet=cap.wallet, owner=cap.owner, exclude_run=run_id,
        )  # fmt: skip
        if used + reservation.in_amount > cap.limit:
            return CapHit(cap, used)
    return None


def _keep_results(conn: Connection, results: Sequence[ExecuteValues]) -> Steps[None]:
    for values in results:
        yield from runwrite.record_execute_steps(conn, values)


_RUN_FIELDS = frozenset(field.name for field in dataclass_fields(RunRecord))


def _moved(run: RunRecord, changed: dict[str, Any]) -> RunRecord:
    """`run` with the columns `advance` set on it: what `dataclasses.replace` gives,
    without its keyword `__init__` of every field (15 us; a run makes four).

    The rest is the caller's copy, so it is the stored row only if nobody else moved
    the run since that copy was read: the runner's advances match the columns that
    name the run's order (`RunBook.advance`), so an advance that passed proves its
    order is the stored one; a caller that does not match must not lean on the rest."""
    unknown = changed.keys() - _RUN_FIELDS
    if unknown:
        raise TypeError(f"a run has no fields {sorted(unknown)}")
    moved = object.__new__(RunRecord)
    values = moved.__dict__
    values.update(run.__dict__)
    values.update(changed)
    if "status" in changed:
        values["status"] = RunStatus(changed["status"])
    return moved


_CLAIMED = (
    select(PlanVersion.content, PlanVersion.created_at, Plan.name)
    .join(Plan, Plan.id == PlanVersion.plan_id)
    .where(PlanVersion.plan_id == bindparam("b_id"), PlanVersion.version == bindparam("b_version"))
)


def _claimed_plan(conn: Connection, run: RunRecord) -> PlanRecord | None:
    """The plan at `run`'s claimed version, from its stored content (`PlanInput.content`,
    its name); None if not stored or unreadable."""
    row = conn.execute(_CLAIMED, {"b_id": run.plan_id, "b_version": run.plan_version}).first()
    if row is None or not isinstance(row.content, dict):
        return None
    content = row.content
    try:
        return PlanRecord.from_mapping({
            "id": run.plan_id, "version": run.plan_version,
            "name": content.get("name") or row.name, "kind": content["kind"],
            "schedule": content["schedule"],
            "request": content["request"], "settings": content.get("settings"),
            "enabled": bool(content.get("enabled", True)),
            "description": content.get("description"), "created_at": row.created_at,
            "updated_at": row.created_at, "wallet": content.get("wallet", DEFAULT_WALLET),
        })  # fmt: skip
    except (KeyError, ValueError):
        return None


def _plan(conn: Connection, plan_id: int) -> PlanRecord | None:
    row = conn.execute(_PLAN, {"b_id": plan_id}).one_or_none()
    if row is None:
        return None
    try:
        return PlanRecord.from_mapping(row._mapping)
    except ValueError:
        return None
