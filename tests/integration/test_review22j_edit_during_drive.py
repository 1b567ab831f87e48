"""A plan edited, disabled or removed from its file (`plans apply`) while one of its
runs is under way, in the drive that claimed it (not a recovery): the run's first
transaction is refused with a code that allows a fresh order (-1005, expired), and the
drive must not order, judge and sign a second transaction for a plan the operator
changed or stopped meanwhile (README, "Changing the config of a running daemon";
docs/wallets.md: "A run of a plan changed or disabled since its claim is never
ordered again (after its signed transaction expired unposted, or the API refused
it): it ends `skipped`"). The drive keeps the plan as the scheduler handed it over
(the claimed version), so `changed_since_claim` compared the run with itself.

Real runner and emulator over loopback, real plan files applied by `apply_paths`,
on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.domain import RunStatus
from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from jupcron.store.records import PlanRecord
from tests.fixtures.daemon import swap_plan
from tests.fixtures.plans import write_plans
from tests.fixtures.runner import Rig, RigFactory, outcome_of
from tests.integration.test_runner import SLOT

NAME = "edited-in-flight"


def _apply(rig: Rig, folder: Path) -> None:
    apply_paths(rig.factory, [folder], now=datetime.now(UTC), complete=True,
                wallets=("default",))  # fmt: skip


def _stored(factory: sessionmaker[Session], name: str) -> PlanRecord:
    with transaction(factory) as session:
        found = [p for p in store_plans.all_plans(session) if p.name == name]
    assert len(found) == 1
    return found[0]


def _edit_amount(folder: Path) -> None:
    write_plans(folder / "a.yaml", [swap_plan(NAME, {"every": "1h"}, amount=9_000_000)])


def _disable(folder: Path) -> None:
    write_plans(folder / "a.yaml", [{**swap_plan(NAME, {"every": "1h"}), "enabled": False}])


def _remove(folder: Path) -> None:
    write_plans(folder / "a.yaml", [swap_plan("another-plan", {"every": "1h"})])


EDITS: dict[str, Callable[[Path], None]] = {
    "amount edited": _edit_amount,
    "disabled": _disable,
    "removed from its file": _remove,
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_plan_changed_while_its_transaction_is_posted_is_never_ordered_again(
    make_rig: RigFactory, db_url: str, tmp_path: Path, edit: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    folder = tmp_path / "plans"
    write_plans(folder / "a.yaml", [swap_plan(NAME, {"every": "1h"})])
    _apply(rig, folder)
    plan = _stored(rig.factory, NAME)  # what the scheduler hands the runner
    rig.emulator.faults.add("failed", operation="execute_ultra", code=-1005,
                            error="Transaction expired")  # fmt: skip
    applied: list[str] = []

    def on_attempt(attempt: Any) -> None:
        # the operator's `plans apply` lands while the first transaction is posted
        if attempt.operation == "execute_ultra" and not applied:
            EDITS[edit](folder)
            _apply(rig, folder)
            applied.append(edit)

    outcome = outcome_of(rig.runner(on_attempt=on_attempt).fire(plan, SLOT))
    assert applied == [edit]
    assert _stored(rig.factory, NAME).version == plan.version + 1
    run = rig.run(outcome.run_id)
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 1  # no second order
    assert rig.landed() == []  # nothing signed for the plan as it no longer is
    assert run.status is RunStatus.SKIPPED, (run.status, run.error)
    assert run.error is not None
    assert "since the run was claimed" in run.error
    assert rig.steps(run.id).count("signed") == 1


def test_a_plan_left_as_it_was_is_still_ordered_afresh_once(
    make_rig: RigFactory, db_url: str, tmp_path: Path
) -> None:
    """The guard against edits refuses nothing else: an apply that leaves the plan as
    it was (another plan added) lets the run order afresh, as before."""
    rig = make_rig(loopback=True, db_url=db_url)
    folder = tmp_path / "plans"
    write_plans(folder / "a.yaml", [swap_plan(NAME, {"every": "1h"})])
    _apply(rig, folder)
    plan = _stored(rig.factory, NAME)
    rig.emulator.faults.add("failed", operation="execute_ultra", code=-1005,
                            error="Transaction expired")  # fmt: skip

    def on_attempt(attempt: Any) -> None:
        if attempt.operation == "execute_ultra":
            write_plans(folder / "b.yaml", [swap_plan("another-plan", {"every": "1h"})])
            _apply(rig, folder)

    outcome = outcome_of(rig.runner(on_attempt=on_attempt).fire(plan, SLOT))
    assert outcome.status is RunStatus.SUCCEEDED
    assert rig.emulator.ledger.requests.get("ultra_order", 0) == 2
    assert len(rig.landed()) == 1
