"""What this daemon did lately, for the status page: API requests in the last
minute (the rate in use, against ``api.rate_limit``) and errors in the last
hour (API attempts that failed, runs that ended failed, rejected or in doubt).

Fed as a run listener and an API-attempt observer; kept in memory (since this
process started), bounded by the windows. Time is the ``clock`` seam.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from jupcron.api.client import Attempt
from jupcron.runner.outcome import RunOutcome
from jupcron.store.types import RunStatus

RATE_WINDOW = 60.0  # seconds
ERROR_WINDOW = 3600.0
BAD_RUNS = frozenset({RunStatus.FAILED, RunStatus.REJECTED, RunStatus.IN_DOUBT})
MAX_KEPT = 100_000  # events per window at most (a runaway loop cannot grow memory)


@dataclass(frozen=True)
class Counts:
    requests_last_minute: int
    api_errors_last_hour: int
    run_errors_last_hour: int

    def rate(self) -> float:
        """Requests per second over the last minute."""
        return self.requests_last_minute / RATE_WINDOW


class Activity:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._requests: deque[float] = deque(maxlen=MAX_KEPT)
        self._api_errors: deque[float] = deque(maxlen=MAX_KEPT)
        self._run_errors: deque[float] = deque(maxlen=MAX_KEPT)

    def attempt(self, attempt: Attempt) -> None:
        """An API-attempt observer: every HTTP attempt counts; an answer of 400 or
        more, or none at all, is an error."""
        now = self._clock()
        failed = attempt.http_status is None or attempt.http_status >= 400
        with self._lock:
            self._requests.append(now)
            if failed:
                self._api_errors.append(now)

    def run_finished(self, outcome: RunOutcome) -> None:
        """A run listener."""
        if outcome.status in BAD_RUNS:
            with self._lock:
                self._run_errors.append(self._clock())

    def counts(self) -> Counts:
        now = self._clock()
        with self._lock:
            _drop_before(self._requests, now - RATE_WINDOW)
            _drop_before(self._api_errors, now - ERROR_WINDOW)
            _drop_before(self._run_errors, now - ERROR_WINDOW)
            return Counts(len(self._requests), len(self._api_errors), len(self._run_errors))


def _drop_before(events: deque[float], cutoff: float) -> None:
    while events and events[0] < cutoff:
        events.popleft()
