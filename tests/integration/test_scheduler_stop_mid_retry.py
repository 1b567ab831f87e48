"""Stopping the scheduler while APScheduler's loop is running a one-shot retry job
(a slot refused while this daemon did not lead its wallet, `jupcron.scheduling.outage`).

The loop removes a one-shot job once it has run it. `shutdown` marks the scheduler
stopped before it takes the job stores' lock, so a loop half way through its pass
then looked for the job among the jobs not yet started, found none, and died with
`JobLookupError`: a traceback in the log at such a stop (seen in `make test`). The
stop now pauses the loop and empties the stores first, which waits for the pass.

The pass is held (APScheduler's in-memory job store, not our code, is wrapped) until
the stop has begun, so the interleaving is the one that failed, every time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from apscheduler.jobstores.memory import MemoryJobStore
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.plans import PlanFiles
from tests.integration.test_scheduler_not_leading import lease_on_every_second, wait_until


class _HeldPass:
    """APScheduler's due-jobs read, held once a retry job is due until `release`."""

    def __init__(self) -> None:
        self.holding = threading.Event()
        self.release = threading.Event()

    def wrap(self, original: Any) -> Any:
        def due_jobs(store: MemoryJobStore, now: Any) -> Any:
            jobs = original(store, now)
            if any("-retry-" in job.id for job in jobs) and not self.holding.is_set():
                self.holding.set()
                self.release.wait(5)
                time.sleep(0.3)  # the stop meanwhile: `shutdown` or `pause`, then the lock
            return jobs

        return due_jobs


@pytest.fixture
def held_pass(monkeypatch: pytest.MonkeyPatch) -> Iterator[_HeldPass]:
    held = _HeldPass()
    monkeypatch.setattr(MemoryJobStore, "get_due_jobs", held.wrap(MemoryJobStore.get_due_jobs))
    yield held
    held.release.set()


def test_a_stop_while_the_loop_runs_a_retry_job_leaves_no_traceback(
    sqlite_factory: sessionmaker[Session], plan_files: PlanFiles, held_pass: _HeldPass
) -> None:
    _, lease, scheduler = lease_on_every_second(sqlite_factory, plan_files, "1m", 0.2)
    lease.leading.clear()  # every slot refused: retried by one-shot jobs
    scheduler.start()
    try:
        assert wait_until(held_pass.holding.is_set)
    finally:
        held_pass.release.set()
        scheduler.stop(wait=True)  # the loop's thread raising fails this test (pytest)
    assert lease.refused  # the retries were there to run
