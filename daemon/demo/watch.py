"""Live progress for the demo, read from the store the daemon writes.

`Watcher.poll()` returns the run events added since the last call (the
append-only ``run_events`` table, joined to the run and its plan). Reporters
show them: `PlainReporter` one line per step (logs, pipes, CI), `RichReporter`
a live table of runs on a terminal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TextIO

from sqlalchemy import Engine, text

# the status a run is in after each step the runner records (daemon/runner/core.py)
STEP_STATUS = {
    "ordered": "requested",
    "signed": "signed",
    "submit": "submitted",
    "executed": "succeeded",
    "guard_refused": "rejected",
    "sign_refused": "rejected",
    "dry_run": "dry_run",
    "preflight_skip": "skipped",
    "order_declined": "skipped",
    "recovery_skip": "skipped",
    "order_failed": "failed",
    "execute_failed": "failed",
    "execute_refused": "failed",
    "gave_up": "failed",
    "in_doubt": "in_doubt",
    "reorder": "pending",
}

# steps not worth a line of their own (each HTTP attempt is one)
QUIET = frozenset({"attempt"})

EVENTS_SQL = text(
    "SELECT e.id, e.run_id, e.at, e.step, e.detail, p.name, p.kind, r.status, r.error "
    "FROM run_events e JOIN runs r ON r.id = e.run_id JOIN plans p ON p.id = r.plan_id "
    "WHERE e.id > :last ORDER BY e.id"
)


@dataclass(frozen=True)
class Step:
    event_id: int
    run_id: int
    at: datetime | str
    step: str
    plan: str
    kind: str
    status: str | None  # the status this step moved the run to, if it is a move
    error: str | None


class Watcher:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.last = 0

    def poll(self) -> list[Step]:
        with self.engine.connect() as conn:
            rows = conn.execute(EVENTS_SQL, {"last": self.last}).all()
        steps = []
        for row in rows:
            self.last = row.id
            if row.step in QUIET:
                continue
            detail: Any = row.detail
            if isinstance(detail, str):  # JSON text through a plain SQL query on SQLite
                detail = json.loads(detail)
            status = STEP_STATUS.get(row.step)
            if row.step == "claimed":
                status = (
                    (detail or {}).get("status", "pending")
                    if isinstance(detail, dict)
                    else "pending"
                )
            final = status in ("rejected", "failed", "skipped", "in_doubt")
            steps.append(Step(row.id, row.run_id, row.at, row.step, row.name, row.kind, status,
                              row.error if final else None))  # fmt: skip
        return steps


class Reporter(Protocol):
    def note(self, message: str) -> None: ...
    def steps(self, steps: Sequence[Step]) -> None: ...
    def close(self) -> None: ...


def _clock(at: datetime | str) -> str:
    if isinstance(at, datetime):
        return at.strftime("%H:%M:%S")
    return str(at)[11:19]


class PlainReporter:
    """One line per step: ``12:00:05  run 1  demo-swap  swap  signed -> signed``."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def note(self, message: str) -> None:
        print(f"-- {message}", file=self.out, flush=True)

    def steps(self, steps: Sequence[Step]) -> None:
        for s in steps:
            moved = f" -> {s.status}" if s.status else ""
            why = f"  ({s.error})" if s.error else ""
            print(f"{_clock(s.at)}  run {s.run_id:<3} {s.plan:<18} {s.kind:<14} "
                  f"{s.step}{moved}{why}", file=self.out, flush=True)  # fmt: skip

    def close(self) -> None:
        return None


@dataclass
class _Row:
    plan: str
    kind: str
    path: list[str] = field(default_factory=list)
    error: str = ""


COLOURS = {"succeeded": "green", "rejected": "red", "failed": "red", "in_doubt": "magenta",
           "skipped": "yellow", "dry_run": "cyan"}  # fmt: skip


class RichReporter:
    """On a terminal: a live table of runs, each with the states it went through."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console()
        self.rows: dict[int, _Row] = {}
        self.live = Live(self._table(), console=self.console, refresh_per_second=8)
        self.live.start()

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(title="jupcron demo: runs as they happen", expand=False)
        for column in ("run", "plan", "kind", "states", "why"):
            table.add_column(column)
        for run_id, row in sorted(self.rows.items()):
            states = " → ".join(f"[{COLOURS[s]}]{s}[/]" if s in COLOURS else s for s in row.path)
            table.add_row(str(run_id), row.plan, row.kind, states, row.error)
        return table

    def note(self, message: str) -> None:
        self.console.print(f"[bold]--[/] {message}")

    def steps(self, steps: Sequence[Step]) -> None:
        for s in steps:
            row = self.rows.setdefault(s.run_id, _Row(s.plan, s.kind))
            if s.status and (not row.path or row.path[-1] != s.status):
                row.path.append(s.status)
            if s.error:
                row.error = s.error
        self.live.update(self._table())

    def close(self) -> None:
        self.live.stop()


def reporter_for(out: TextIO, rich: bool | None = None) -> Reporter:
    """Rich on a terminal, plain lines otherwise (or as forced by `rich`)."""
    use_rich = out.isatty() if rich is None else rich
    return RichReporter() if use_rich else PlainReporter(out)
