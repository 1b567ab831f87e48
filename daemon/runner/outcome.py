"""What a run ended as, and who hears about it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from jupcron.domain import RunStatus


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    plan_name: str
    kind: str
    scheduled_for: datetime
    status: RunStatus
    request_id: str | None = None
    signature: str | None = None
    error_code: str | None = None
    error: str | None = None
    fire_lag: float | None = None
    # another driver moved the run during this drive: it is theirs (and theirs to report)
    taken_over: bool = False

    @property
    def ok(self) -> bool:
        return self.status in (RunStatus.SUCCEEDED, RunStatus.DRY_RUN)


class RunListener(Protocol):
    """Told about every run that reached a final (or in-doubt) state."""

    def run_finished(self, outcome: RunOutcome) -> None: ...
