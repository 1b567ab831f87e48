"""A driver whose execute got no answer must not adopt another driver's outcome
(review 22b, lead 1). Daemon A posts a run's signed bytes and hears nothing back
(it lost the wallet's lease with its connection meanwhile: a freeze, a partition);
daemon B, the wallet's new leader, re-posts the same bytes and settles the run.
When A's unanswered drive then reads the run back, it is B's: A must stop there
(`taken_over`), not report B's outcome as its own to its listeners (metrics,
webhook, alerts) or drive on from whatever state B left the run in.

Real PostgreSQL, the emulator over loopback, real signatures; the two daemons are
two runners on one store, B's drive run from A's attempt hook (the moment A's
execute has failed and before A reads the run back)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.recovery import recover
from tests.fixtures.runner import RigFactory


class Heard:
    """A run listener that keeps what it was told."""

    def __init__(self) -> None:
        self.outcomes: list[RunOutcome] = []

    def run_finished(self, outcome: RunOutcome) -> None:
        self.outcomes.append(outcome)


def test_an_unanswered_drive_does_not_adopt_the_outcome_of_the_run_s_new_driver(
    make_rig: RigFactory, pg_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=pg_url)
    plan = rig.plan("swap")
    heir_heard, old_heard = Heard(), Heard()
    heir = rig.runner(node="heir", listeners=[heir_heard])
    done: list[RunOutcome] = []

    def takeover(attempt: Any) -> None:
        # A's execute failed (no answer): B, the new leader, settles the run now
        if attempt.error is not None and attempt.operation.startswith("execute") and not done:
            rig.emulator.faults.clear()
            run_id = rig.run_ids()[0]
            done.extend(recover(heir, runs={run_id}))
            rig.emulator.faults.add("drop", count=0, operation="execute_ultra")  # A: nothing

    old = rig.runner(node="old", listeners=[old_heard], on_attempt=takeover)
    # the bytes land, but A hears no answer
    rig.emulator.faults.add("lost_answer", operation="execute_ultra")
    outcome = old.fire(plan, datetime.now(UTC).replace(microsecond=0))
    assert outcome is not None
    assert [o.status for o in done] == [RunStatus.SUCCEEDED]
    assert [o.status for o in heir_heard.outcomes] == [RunStatus.SUCCEEDED]
    assert rig.run(outcome.run_id).status is RunStatus.SUCCEEDED
    assert len(rig.landed()) == 1
    # A: the run was B's to settle; A says so, and tells its listeners nothing
    assert outcome.taken_over, outcome
    assert old_heard.outcomes == []
