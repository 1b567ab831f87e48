"""A plan's own cap counts its runs of the mint it spends now: a plan edited from USDC
(6 decimals) to SOL (9) does not add its USDC base units to a cap in lamports."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from jupcron.domain import RunStatus
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from jupcron.store.records import PlanRecord
from tests.fixtures.runner import SOL, USDC, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def test_a_plan_cap_does_not_mix_the_base_units_of_two_mints(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    usdc = rig.plan("swap", settings={"caps": {"per_day": 6_000_000}})  # 5 USDC a run
    runner = rig.runner()
    assert outcome_of(runner.fire(usdc, SLOT)).status is RunStatus.SUCCEEDED
    # edited: now 0.005 SOL a run, its cap 0.006 SOL a day (both in lamports)
    sol_swap = {"inputMint": SOL, "outputMint": USDC, "amount": 5_000_000}
    with transaction(rig.factory) as session:
        session.execute(update(Plan).where(Plan.id == usdc.id).values(request=sol_swap, version=2))
        row = session.get(Plan, usdc.id)
        assert row is not None
        sol = PlanRecord.from_row(row)
    outcome = outcome_of(runner.fire(sol, SLOT + timedelta(hours=1)))
    assert outcome.error is None
    assert outcome.status is RunStatus.SUCCEEDED
    assert len(rig.landed()) == 2
