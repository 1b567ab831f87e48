"""On PostgreSQL each daemon recovers the runs of the wallets it leads. A run belongs to
the wallet it was claimed and signed under (`runs.wallet`), not to the wallet its plan
names now: a run of `default` left in flight, its plan since moved to `savings`, is
recovered by `default`'s leader (the one with that key), never taken by `savings`'s
(which could not sign it and left it in flight for good). Real runs over loopback,
on SQLite and PostgreSQL."""

from __future__ import annotations

from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_report_wallet_of_each_run import SLOT, move
from tests.integration.test_wallets_runs import two_wallets


def test_a_run_in_flight_is_recovered_by_its_own_wallets_leader_after_its_plan_moved(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    _, _, wallets = two_wallets(rig)
    rig.emulator.faults.add("timed_out", operation="execute_ultra")
    runner = rig.runner(wallets=wallets)
    outcome = outcome_of(runner.fire(rig.plan("swap", name="weekly"), SLOT))
    assert rig.run(outcome.run_id).status is RunStatus.SUBMITTED  # may have landed
    move(rig, "weekly", "savings")

    assert recover(runner, startup=True, only=lambda wallet: wallet == "savings") == []
    assert rig.run(outcome.run_id).status is RunStatus.SUBMITTED  # not savings' to take
    (settled,) = recover(runner, startup=True, only=lambda wallet: wallet == "default")
    assert settled.run_id == outcome.run_id
    assert settled.status is RunStatus.SUCCEEDED
    assert len(rig.landed()) == 1
