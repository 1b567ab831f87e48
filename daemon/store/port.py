"""The run store port: everything a run needs of the database, as one protocol.

The runner and the scheduler write runs only through this (claims, skipped
slots, steps, events, execute results); `jupcron.store.runstore` is the one
implementation, on Core connections, and the only writer of the run tables
(tests/unit/test_run_writes.py). Every method is one committed
transaction (or one share of a group commit): when it returns, what it wrote
is durable, so the side effect that follows may go ahead (DESIGN §2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from jupcron.domain import RunStatus
from jupcron.errors import FatalError
from jupcron.store.records import PlanRecord, RunRecord

PAUSE_TTL = 0.5  # seconds a run store may serve its copy of the pauses

# run_id, step, detail, at: one row of the append-only events table
Event = tuple[int, str, dict[str, Any], datetime]


@dataclass(frozen=True)
class Reservation:
    """What a run is about to put in: written on its row so later cap checks count it."""

    input_mint: str
    in_amount: int
    output_mint: str | None


@dataclass(frozen=True)
class CapWindow:
    """One spending cap: at most `limit` of input committed since `since`, counted
    over the runs that match every filter given: one plan's (`plan_id`), with
    `input_mint`, of `wallet` (with `owner`: of that keypair, whatever the name it was
    claimed under, and `wallet`'s runs recorded without an owner)."""

    name: str  # how the reason names it: "plan cap per_day=…", "cap on <mint> per_week=…"
    since: datetime
    limit: int
    plan_id: int | None = None
    input_mint: str | None = None
    wallet: str | None = None  # only the runs of this wallet (its configured name)
    owner: str | None = None  # only the runs of this keypair (its address), by name if unrecorded


@dataclass(frozen=True)
class CapHit:
    """The first cap that a reservation would exceed, and what it had used already."""

    cap: CapWindow
    used: int


@dataclass(frozen=True)
class SwapEventValues:
    input_mint: str
    input_amount: str
    output_mint: str
    output_amount: str
    amm: str | None = None


@dataclass(frozen=True)
class ExecuteValues:
    run_id: int
    signature: str
    operation: str
    recorded_at: datetime
    status: str | None = None
    code: str | None = None
    http_status: int | None = None
    slot: int | None = None
    error: str | None = None
    order_account: str | None = None
    total_input_amount: str | None = None
    total_output_amount: str | None = None
    input_amount_result: str | None = None
    output_amount_result: str | None = None
    answer: dict[str, Any] = field(default_factory=dict)
    swap_events: tuple[SwapEventValues, ...] = ()


ALL_PLANS = "*"  # the scope of `jupcron pause --all` (no plan name has a '*')


@dataclass(frozen=True)
class Pause:
    """An operator's pause: one plan's slots (`scope` its name), or every plan's."""

    scope: str
    reason: str | None
    by: str
    at: datetime

    @property
    def all_plans(self) -> bool:
        return self.scope == ALL_PLANS

    def skip_reason(self) -> str:
        """What a slot skipped under this pause records as its error."""
        what = "all plans paused" if self.all_plans else "paused"
        resume = "jupcron resume --all" if self.all_plans else f"jupcron resume {self.scope}"
        return f"{what}: {self.reason or 'no reason given'} (by {self.by}; {resume})"


class UnendedRunError(FatalError):
    """A claim made `alone` found a run of the plan that has not ended (`run`: in
    flight or in_doubt, the oldest); nothing was written."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        super().__init__(f"run {run.id} of plan {run.plan_id} is {run.status}: not ended")


class RunStore(Protocol):
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
        """Insert the run row of (plan, slot) as pending, `detail` in its `claimed`
        event; ``None`` if the slot is taken. If the stored plan is no longer enabled at
        ``plan.version`` (changed since the caller read it), the row is ``skipped``.
        `spends`: what the run is to put in, on its row from the claim on (caps count it).
        `owner`: the address of the keypair the plan's wallet names (caps count by it).
        `alone` (a manual fire's, each its own slot): only while the plan has no run
        that has not ended, looked for in the claim's own transaction, serialized with
        every other claim of the plan's runs (a look in a transaction of its own missed
        a claim made, or not yet committed, meanwhile: two purchases); else
        `UnendedRunError`, and nothing is written."""
        ...

    def skip(
        self, plan: PlanRecord, slots: Sequence[datetime], *, now: datetime, error: str
    ) -> list[datetime]:
        """Record the plan's `slots` as ``skipped`` with `error`, in one transaction;
        the slots this call recorded (a slot already taken keeps its run)."""
        ...

    def set_next(self, slots: Mapping[int, tuple[datetime | None, int]]) -> None:
        """The scheduler's next slots of plans that fired, {id: (slot, version)}, each
        written only while the plan is still settled at that version
        (`jupcron.store.firing.set_next`): queued with the runs' writes, not beside
        them (on SQLite a writer beside them waits on the file's lock)."""
        ...

    def load(self, run_id: int) -> RunRecord:
        """The run as stored (LookupError if there is none)."""
        ...

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
        """Compare-and-set: move the run to `status` with `fields` if it is in one of
        `expect` and its `match` columns (``request_id``, ``unsigned_tx``) still
        hold those values (None: NULL), with an event `step`
        after the events `before`, keeping `results` in the same transaction. The run
        as it now is, and whether this call moved it (if not, `before` and `results`
        are still recorded)."""
        ...

    def event(self, events: Sequence[Event], results: Sequence[ExecuteValues] = ()) -> None:
        """Append events (attempts among them count in their run's `attempts`), and
        keep `results`, in one transaction."""
        ...

    def reserve(
        self, run_id: int, reservation: Reservation, caps: Sequence[CapWindow], *,
        now: datetime, owner: str,
    ) -> CapHit | None:  # fmt: skip
        """Check the caps and write the reservation in one serialized transaction, so two
        runs racing for the last of a cap cannot both pass; the cap hit (nothing written)
        or ``None`` (reserved). `owner`: the keypair that will sign the run, written with
        the reservation (a run recovered after its wallet's keypair was replaced is the
        new key's spending, not the key it was claimed under)."""
        ...

    def cap_hit(
        self, run_id: int, reservation: Reservation, caps: Sequence[CapWindow]
    ) -> CapHit | None:
        """The caps checked as `reserve` checks them, with nothing written: a dry run's
        pre-flight (it shows what a real run would meet, yet moves no money, so it must
        hold back no real run's room under a cap)."""
        ...

    def in_flight(self) -> list[tuple[RunRecord, PlanRecord | None]]:
        """Runs not yet final, with their plan as it is now (None: unreadable)."""
        ...

    def plan(self, plan_id: int) -> PlanRecord | None:
        """The plan as the store has it now (None: gone or unreadable)."""
        ...

    def claimed_plan(self, run: RunRecord) -> PlanRecord | None:
        """The plan as it read at the version `run` was claimed under (``plan_versions``);
        None when that version was not stored or does not parse."""
        ...

    def steps(self, run_id: int) -> list[tuple[str, dict[str, Any]]]:
        """The run's events (step, detail), oldest first."""
        ...

    def trigger_v2_vault(self, wallet: str, owner: str) -> str | None:
        """The Trigger V2 vault the latest signed run of the keypair `owner` paid (its
        runs under `wallet`, the configured name, looked at first, then under any name:
        a wallet renamed in the config keeps its vault), or ``None``."""
        ...

    def pause_of(self, plan_name: str) -> Pause | None:
        """The pause in effect for the plan (its own, else every plan's), or ``None``;
        as stored at most `PAUSE_TTL` seconds ago (the hot path reads a cached copy)."""
        ...
