"""A run left in flight whose plan row can no longer be read (a stored schedule, request
or settings this version does not parse: a downgrade, a hand edit) is not silently
passed over by recovery, pass after pass, for ever.

Unsigned, it cannot be ordered under terms nobody can read: recovery records it as
`skipped`, with why, as a drive does for such a run (`changed_since_claim`), and tells
the listeners (the operator's alerts). Left `pending` it also held its reserved amount
against the caps for ever, and refused every `jupcron fire` of the plan beside it.

Posted (`submitted`), it may have landed: it was never settled, never became
`in_doubt` once its blockhash had surely expired (as DESIGN §2 promises of a run that
cannot be settled), and so could not be settled by hand either (`jupcron settle` takes
an in_doubt run only). Signed and never posted, it sat `signed` for ever, its amount
counted against the caps: once its blockhash has surely expired it can never land.

Real SQLite file, the emulator (in process), the real runner and store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.recovery import recover
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from tests.fixtures.runner import Clock, Rig, RigFactory

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)


class Heard:
    """A run listener that keeps what it was told."""

    def __init__(self) -> None:
        self.outcomes: list[RunOutcome] = []

    def run_finished(self, outcome: RunOutcome) -> None:
        self.outcomes.append(outcome)


def _unreadable(rig: Rig, plan_id: int) -> None:
    """The plan's stored schedule, as no version of the parser reads it."""
    with transaction(rig.factory) as session:
        session.execute(update(Plan).where(Plan.id == plan_id).values(schedule={"every": "x"}))


def test_an_unsigned_run_of_an_unreadable_plan_is_skipped_and_told(
    make_rig: RigFactory,
) -> None:
    rig = make_rig()
    runner = rig.runner()
    plan = rig.plan("swap")
    claimed = runner.ports.store.claim(
        plan, SLOT, now=datetime.now(UTC), trigger="schedule", claimed_by="gone"
    )  # the claim, then the process died: nothing ordered
    assert claimed is not None
    _unreadable(rig, plan.id)

    heard = Heard()
    outcomes = recover(rig.runner(listeners=[heard]), startup=True)

    run = rig.run(claimed.id)
    assert run.status is RunStatus.SKIPPED, (run.status, rig.steps(claimed.id))
    assert run.error is not None
    assert "can no longer be read" in run.error
    assert [o.status for o in outcomes] == [RunStatus.SKIPPED]
    assert [(o.run_id, o.status) for o in heard.outcomes] == [(claimed.id, RunStatus.SKIPPED)]
    assert rig.issued() == 0  # nothing ordered


def test_a_posted_run_of_an_unreadable_plan_ends_in_doubt_once_it_expired(
    make_rig: RigFactory,
) -> None:
    clock = Clock(SLOT)
    rig = make_rig(clock=clock)
    plan = rig.plan("swap")
    failpoints.arm("before_execute")  # submitted stored; the process dies as it posts
    try:
        with pytest.raises(failpoints.SimulatedCrash):
            rig.runner().fire(plan, SLOT)
    finally:
        failpoints.disarm()
    (run_id,) = rig.run_ids()
    assert rig.run(run_id).status is RunStatus.SUBMITTED
    _unreadable(rig, plan.id)
    clock.advance(600)  # its blockhash surely expired: it can no longer land, or not

    heard = Heard()
    recover(rig.runner(listeners=[heard]), startup=True)

    assert rig.run(run_id).status is RunStatus.IN_DOUBT, rig.steps(run_id)
    assert [(o.run_id, o.status) for o in heard.outcomes] == [(run_id, RunStatus.IN_DOUBT)]


def test_a_signed_unposted_run_of_an_unreadable_plan_fails_once_it_expired(
    make_rig: RigFactory,
) -> None:
    clock = Clock(SLOT)
    rig = make_rig(clock=clock)
    plan = rig.plan("swap")
    run_id = rig.signed_then_crashed(plan, SLOT)  # signed stored; nothing posted
    _unreadable(rig, plan.id)

    heard = Heard()
    recover(rig.runner(listeners=[heard]), startup=True)
    assert rig.run(run_id).status is RunStatus.SIGNED  # not expired: a reader may post it
    assert heard.outcomes == []

    clock.advance(600)  # its blockhash surely expired: it can never land
    recover(rig.runner(listeners=[heard]), startup=True)
    run = rig.run(run_id)
    assert run.status is RunStatus.FAILED, rig.steps(run_id)
    assert run.error is not None
    assert "never posted" in run.error
    assert [(o.run_id, o.status) for o in heard.outcomes] == [(run_id, RunStatus.FAILED)]
    assert rig.landed() == []
