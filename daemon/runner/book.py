"""The run's book: its row and its append-only events.

Every state change is one committed transaction with an event; `advance` is
a compare-and-set on the current status and on the run's order as this driver
knows it (its requestId and unsigned transaction), so two drivers of one run (a
recovery pass and a `jupcron fire`, say) can never both move it: not even when the
other drove it round to the same status with an order of its own (requested →
pending → requested). A driver whose compare-and-set fails stops there
(`RunTakenOver`): the run is the other driver's, and nothing more is posted.

HTTP attempts: one that failed is committed at once (before any retry); one
whose answer was handed back to the runner is committed in the same
transaction as the state change that answer leads to (or, at the latest,
when the drive ends). Either way it is in the store before the run's next
external side effect.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import structlog

from jupcron.domain import RunStatus
from jupcron.errors import ApiError, JupcronError
from jupcron.logs import without_secrets
from jupcron.store.port import Event, ExecuteValues, RunStore
from jupcron.store.records import RunRecord

log = structlog.get_logger(__name__)


class RunTakenOver(Exception):
    """Another driver moved the run since this one read it: this drive stops (caught
    by `jupcron.runner.core.Runner`; it never leaves the runner). `record`: the run as
    the store has it now."""

    def __init__(self, record: RunRecord) -> None:
        super().__init__(f"run {record.id} was moved by another driver (now {record.status})")
        self.record = record


def order_of(run: RunRecord) -> dict[str, Any]:
    """The columns that name the order a driver's copy of the run is about, and its
    driver: each order call gives a new requestId and a new unsigned transaction (a
    fresh blockhash), and a recovery that takes a run over writes its own name
    (`claimed_by`) before it does anything else with it. A run moved on by another
    driver, or only taken over (a re-post of the same bytes changes no other
    column), never matches its old copy: the old driver's next write fails."""
    return {
        "request_id": run.request_id,
        "unsigned_tx": run.unsigned_tx,
        "claimed_by": run.claimed_by,
    }


class RunBook:
    def __init__(
        self,
        store: RunStore,
        clock: Callable[[], datetime],
        on_attempt: Callable[[Any], None] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.on_attempt = on_attempt
        # answered attempts and execute results not yet committed, by run (each run
        # has one driver): they go with the run's next write
        self._answered: dict[int, list[Event]] = {}
        self._results: dict[int, list[ExecuteValues]] = {}
        # the detail of the ``ordered`` event this book committed for a run it drives
        # (what `ordered` would read back), until the drive ends or another driver moves it
        self._ordered: dict[int, dict[str, Any]] = {}

    def load(self, run_id: int) -> RunRecord:
        return self.store.load(run_id)

    def advance(
        self,
        run: RunRecord,
        status: RunStatus,
        *,
        expect: Sequence[RunStatus] | None = None,
        step: str | None = None,
        detail: dict[str, Any] | None = None,
        **fields: Any,
    ) -> RunRecord:
        """Move the run, if it is still in `expect` (default: its current status) with
        the order of this copy (`order_of`); else raise `RunTakenOver`."""
        with self._booking(run.id) as (answered, results):
            record, moved = self.store.advance(
                run, status, now=self.clock(),
                expect=expect if expect is not None else [run.status],
                step=step or str(status), detail=detail or {}, before=answered, fields=fields,
                results=results, match=order_of(run),
            )  # fmt: skip
        if not moved:
            self._ordered.pop(run.id, None)  # another driver moved it: read from the store
            log.warning(
                "run_state_conflict", wanted=str(status), had=str(run.status),
                now=str(record.status), request_id=record.request_id,
            )  # fmt: skip
            raise RunTakenOver(record)
        if step == "ordered":  # as the store gives it back (a JSON copy)
            self._ordered[run.id] = json.loads(json.dumps(detail or {}))
        return record

    def finish(self, run: RunRecord, status: RunStatus, *, step: str, **fields: Any) -> RunRecord:
        detail = fields.pop("detail", None) or {}
        if fields.get("error"):
            detail.setdefault("error", fields["error"])
        return self.advance(run, status, step=step, detail=detail, **fields)

    def event(self, run_id: int, step: str, detail: dict[str, Any]) -> None:
        with self._booking(run_id) as (answered, results):
            self.store.event([*answered, (run_id, step, detail, self.clock())], results)

    def keep_result(self, run_id: int, values: ExecuteValues) -> None:
        """An execute answer's result, committed with the state change it leads to
        (or, at the latest, when the drive ends)."""
        self._results.setdefault(run_id, []).append(values)

    def flush(self, run_id: int) -> None:
        """Commit the run's answered attempts and results not yet in the store."""
        if self._answered.get(run_id) or self._results.get(run_id):
            with self._booking(run_id) as (answered, results):
                self.store.event(answered, results)

    @contextmanager
    def _booking(self, run_id: int) -> Iterator[tuple[list[Event], list[ExecuteValues]]]:
        """The run's attempts and results waiting to be committed, taken for one
        transaction; if it fails (the store is down) they wait again, for `flush` or
        `forget`."""
        answered = self._answered.pop(run_id, [])
        results = self._results.pop(run_id, [])
        try:
            yield answered, results
        except BaseException:
            if answered:
                self._answered[run_id] = [*answered, *self._answered.get(run_id, [])]
            if results:
                self._results[run_id] = [*results, *self._results.get(run_id, [])]
            raise

    def forget(self, run_id: int) -> None:
        """Drop what `flush` could not commit (the drive is over; the store was down)."""
        self._ordered.pop(run_id, None)
        lost = self._answered.pop(run_id, None)
        results = self._results.pop(run_id, None)
        if lost or results:
            log.error(
                "run_attempts_not_booked", run_id=run_id, attempts=len(lost or ()),
                results=len(results or ()),
            )  # fmt: skip

    def observer(self, run_id: int) -> Callable[[Any], None]:
        """An API observer that books every HTTP attempt against the run."""

        def observe(attempt: Any) -> None:
            error = None if attempt.error is None else without_secrets(attempt.error)
            detail = {
                "operation": attempt.operation, "number": attempt.number,
                "http_status": attempt.http_status, "error": error,
                "waited": round(float(attempt.waited or 0), 3),
            }  # fmt: skip
            self._answered.setdefault(run_id, []).append((run_id, "attempt", detail, self.clock()))
            if attempt.error is not None:
                self.flush(run_id)  # failed: in the store before any retry
            if self.on_attempt is not None:
                self.on_attempt(attempt)

        return observe

    def ordered(self, run_id: int) -> dict[str, Any]:
        """The detail of the run's latest ``ordered`` event (what its order call said):
        the one this book committed in this drive, else read from the store."""
        if run_id in self._ordered:
            return dict(self._ordered[run_id])
        return self._latest(run_id, "ordered")

    def claimed(self, run_id: int) -> dict[str, Any]:
        """The detail of the run's ``claimed`` event: its trigger and the dry-run state
        it was claimed with (`jupcron.runner.ports.run_mode`), read from the store."""
        return self._latest(run_id, "claimed")

    def _latest(self, run_id: int, wanted: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for step, detail in self.store.steps(run_id):
            if step == wanted:
                found = dict(detail)
        return found


def api_fields(exc: JupcronError) -> dict[str, Any]:
    fields: dict[str, Any] = {"error": without_secrets(str(exc))}
    if isinstance(exc, ApiError):
        if exc.info.code is not None:
            fields["error_code"] = str(exc.info.code)
        elif exc.info.http_status is not None:
            fields["error_code"] = f"http_{exc.info.http_status}"
    return fields


BODY_LIMIT = 2000


def api_detail(exc: JupcronError) -> dict[str, Any]:
    """What the API said, for the event log: fields, HTTP status and the raw body (trimmed)."""
    detail = api_fields(exc)
    if isinstance(exc, ApiError):
        info = exc.info
        detail["operation"] = info.operation
        detail["http_status"] = info.http_status
        if info.cause:
            detail["cause"] = without_secrets(info.cause)
        if info.body:
            detail["body"] = without_secrets(info.body[:BODY_LIMIT])
    detail["type"] = type(exc).__name__
    return detail


def programs_of(summary: Any) -> list[dict[str, str | None]]:
    """The programs a transaction calls, as JSON objects for the event log."""
    out: list[dict[str, str | None]] = []
    for program in getattr(summary, "programs", None) or []:
        pid, name = program if isinstance(program, tuple) else (program, None)
        out.append({"id": str(pid), "name": name})
    return out
