"""The run's book: its row and its append-only events.

Every state change is one committed transaction with an event; `advance` is
a compare-and-set on the current status, so two drivers of one run (a
recovery pass and a `jupcron fire`, say) can never both move it.

HTTP attempts: one that failed is committed at once (before any retry); one
whose answer was handed back to the runner is committed in the same
transaction as the state change that answer leads to (or, at the latest,
when the drive ends). Either way it is in the store before the run's next
external side effect.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from daemon.errors import JupcronError
from daemon.store import runs
from daemon.store.engine import begin
from daemon.store.records import RunRecord
from daemon.store.types import RunStatus

log = structlog.get_logger(__name__)

Event = runs.Event


class RunBook:
    def __init__(
        self,
        factory: sessionmaker[Session],
        clock: Callable[[], datetime],
        on_attempt: Callable[[Any], None] | None = None,
    ) -> None:
        self.factory = factory
        self.engine = factory.kw["bind"]
        self.clock = clock
        self.on_attempt = on_attempt
        # answered attempts not yet committed, by run (each run has one driver)
        self._answered: dict[int, list[Event]] = {}

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
        expect: Sequence[RunStatus] | None = None,
        step: str | None = None,
        detail: dict[str, Any] | None = None,
        **fields: Any,
    ) -> RunRecord:
        """Move the run (if it is still in `expect`, default: its current status)."""
        with self._booking(run.id) as answered, begin(self.engine) as conn:
            changed = runs.advance(
                conn, run.id, status, now=self.clock(),
                expect=expect if expect is not None else [run.status],
                step=step, detail=detail, before=answered, **fields,
            )  # fmt: skip
            if changed is not None:
                return runs.moved(run, changed)
            self._bump(conn, run.id, len(answered))
            runs.add_events(conn, answered)
            log.warning("run_state_conflict", wanted=str(status), had=str(run.status))
            record = runs.get(conn, run.id)
        if record is None:
            raise LookupError(f"run {run.id} is not in the store")
        return record

    def finish(self, run: RunRecord, status: RunStatus, *, step: str, **fields: Any) -> RunRecord:
        detail = fields.pop("detail", None) or {}
        if fields.get("error"):
            detail.setdefault("error", fields["error"])
        return self.advance(run, status, step=step, detail=detail, **fields)

    def event(self, run_id: int, step: str, detail: dict[str, Any]) -> None:
        with self._booking(run_id) as answered, begin(self.engine) as conn:
            self._bump(conn, run_id, len(answered))
            runs.add_events(conn, [*answered, (run_id, step, detail, self.clock())])

    def flush(self, run_id: int) -> None:
        """Commit the run's answered attempts not yet in the store."""
        if self._answered.get(run_id):
            with self._booking(run_id) as answered, begin(self.engine) as conn:
                self._bump(conn, run_id, len(answered))
                runs.add_events(conn, answered)

    @contextmanager
    def _booking(self, run_id: int) -> Iterator[list[Event]]:
        """The run's attempts waiting to be committed, taken for one transaction; if
        it fails (the store is down) they wait again, for `flush` or `forget`."""
        answered = self._answered.pop(run_id, [])
        try:
            yield answered
        except BaseException:
            if answered:
                self._answered[run_id] = [*answered, *self._answered.get(run_id, [])]
            raise

    def forget(self, run_id: int) -> None:
        """Drop what `flush` could not commit (the drive is over; the store was down)."""
        lost = self._answered.pop(run_id, None)
        if lost:
            log.error("run_attempts_not_booked", run_id=run_id, attempts=len(lost))

    @staticmethod
    def _bump(conn: Connection, run_id: int, by: int) -> None:
        if by:
            runs.bump_attempts(conn, run_id, by)

    def observer(self, run_id: int) -> Callable[[Any], None]:
        """An API observer that books every HTTP attempt against the run."""

        def observe(attempt: Any) -> None:
            detail = {
                "operation": attempt.operation, "number": attempt.number,
                "http_status": attempt.http_status, "error": attempt.error,
                "waited": round(float(attempt.waited or 0), 3),
            }  # fmt: skip
            self._answered.setdefault(run_id, []).append((run_id, "attempt", detail, self.clock()))
            if attempt.error is not None:
                self.flush(run_id)  # failed: in the store before any retry
            if self.on_attempt is not None:
                self.on_attempt(attempt)

        return observe

    def was_gasless(self, run_id: int) -> bool:
        """Whether the API marked this run's (latest) order gasless."""
        gasless = False
        with begin(self.engine) as conn:
            for _, step, detail in runs.events(conn, run_id):
                if step == "ordered":
                    gasless = bool(detail.get("gasless"))
        return gasless


def api_fields(exc: JupcronError) -> dict[str, Any]:
    info = getattr(exc, "info", None)
    code = getattr(info, "code", None)
    fields: dict[str, Any] = {"error": str(exc)}
    if code is not None:
        fields["error_code"] = str(code)
    elif getattr(info, "http_status", None) is not None:
        fields["error_code"] = f"http_{info.http_status}"  # type: ignore[union-attr]
    return fields


BODY_LIMIT = 2000


def api_detail(exc: JupcronError) -> dict[str, Any]:
    """What the API said, for the event log: fields, HTTP status and the raw body (trimmed)."""
    info = getattr(exc, "info", None)
    detail = api_fields(exc)
    if info is not None:
        detail["operation"] = getattr(info, "operation", None)
        detail["http_status"] = getattr(info, "http_status", None)
        if getattr(info, "cause", None):
            detail["cause"] = info.cause
        body = getattr(info, "body", None)
        if body:
            detail["body"] = body[:BODY_LIMIT]
    detail["type"] = type(exc).__name__
    return detail


def programs_of(summary: Any) -> list[dict[str, str | None]]:
    """The programs a transaction calls, as JSON objects for the event log."""
    out: list[dict[str, str | None]] = []
    for program in getattr(summary, "programs", None) or []:
        pid, name = program if isinstance(program, tuple) else (program, None)
        out.append({"id": str(pid), "name": name})
    return out
