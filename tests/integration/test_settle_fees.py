"""An in_doubt run settled from what the chain and the store show, read back by the
report and the audit: a transaction that landed and failed on chain cost the wallet
its network fee; one whose order the follower found did land."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, text

from jupcron.domain import RunStatus
from jupcron.errors import ConfigError
from jupcron.report.build import build
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.store import follow
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.follow import FollowRigFactory, recurring_request
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_runner import SLOT


def _network_fee(engine: Engine, plan: str) -> int:
    with engine.connect() as conn:
        (report,), _ = build(conn, plan=plan)
    return report.network_fee_lamports + report.priority_fee_lamports


def test_a_run_settled_as_failed_on_chain_keeps_its_slot_and_its_fee_in_the_report(
    make_rig: RigFactory, db_url: str
) -> None:
    """Before: the verdict stored no slot, so the report (which counts a failed run's
    fee only when it landed, i.e. has a slot) dropped the fee the network took."""
    rig = make_rig(db_url=db_url)
    rig.emulator.faults.add("failed", operation="execute_ultra", code=6001, error="slippage")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap", name="s"), SLOT))
    run = rig.run(outcome.run_id)
    assert (run.status, run.slot is not None) == (RunStatus.FAILED, True)  # landed, failed
    paid = _network_fee(rig.engine, "s")
    assert paid > 0
    with rig.engine.begin() as conn:  # as a lost execute answer would have left it
        conn.execute(
            text("UPDATE runs SET status = 'in_doubt', slot = NULL, error = NULL, "
                 "error_code = NULL WHERE id = :id"), {"id": run.id},
        )  # fmt: skip
    assert _network_fee(rig.engine, "s") == 0
    rpc = rig.rpc()
    try:
        verdict = Verdict(landed=False, reason="explorer: failed, slippage", by="al")
        settled = settle_in_doubt(
            SqlRunStore(rig.engine), run.id, verdict, now=datetime.now(UTC), rpc=rpc
        )
    finally:
        rpc.close()
    assert settled.status is RunStatus.FAILED
    assert settled.slot == run.slot
    assert _network_fee(rig.engine, "s") == paid


def test_not_landed_is_refused_when_the_follower_found_the_runs_transaction(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """Before: with no RPC node, --not-landed made the run failed although the
    follower had found the order its transaction opened: the audit showed a failed run
    that spent, and the follower (which follows succeeded and in-doubt runs' orders)
    stopped following it, so its later fills and its refund were never counted."""
    f = make_follow_rig(db_url)
    plan = f.rig.plan("recurring", recurring_request(3), name="dca")
    run_id = f.fire(plan)
    order = f.rig.run(run_id).order_account
    with f.engine.begin() as conn:  # the execute answer was lost: the account unknown
        conn.execute(
            text("UPDATE runs SET status = 'in_doubt', order_account = NULL WHERE id = :r"),
            {"r": run_id},
        )
    f.follower().poll()  # found by its open transaction, the run's signature
    assert {r["order_account"] for r in f.fills("dca")} == {order}
    store = SqlRunStore(f.engine)
    with f.engine.connect() as conn:
        seen = follow.landed_evidence(conn, run_id)
    assert seen is not None
    assert order is not None
    assert order in seen
    wrong = Verdict(landed=False, reason="not in my explorer", by="al")
    with pytest.raises(ConfigError, match="landed"):
        settle_in_doubt(store, run_id, wrong, now=datetime.now(UTC), seen=seen)
    assert f.rig.run(run_id).status is RunStatus.IN_DOUBT
    forced = settle_in_doubt(store, run_id, wrong, now=datetime.now(UTC), seen=seen, force=True)
    assert forced.status is RunStatus.FAILED
    right = Verdict(landed=True, reason="the follower found its order", by="al")
    other = f.fire(f.rig.plan("recurring", recurring_request(3), name="dca-2"))
    with f.engine.begin() as conn:
        conn.execute(text("UPDATE runs SET status = 'in_doubt' WHERE id = :r"), {"r": other})
        assert follow.landed_evidence(conn, other) is None  # nothing followed yet
    assert settle_in_doubt(store, other, right, now=datetime.now(UTC)).status is (
        RunStatus.SUCCEEDED
    )
