"""What the Trigger V2 follower takes from an order's events must have landed.

The history's events carry a ``state`` (``success`` | ``failed`` | ``pending``,
openapi-spec/trigger/v2/trigger.yaml). A deposit event still ``pending`` (the create
answered ``depositConfirmed: false``) or ``failed`` says nothing landed: `event_with`
already refuses such an event as proof when a run is settled. The follower stored its
signature as the order's ``open_tx`` all the same, and ``jupcron settle`` reads a
followed order's ``open_tx`` as proof that the run's transaction landed
(`store.follow.landed_evidence`): an operator who knows the deposit never landed was
refused ``--not-landed`` ("... which signature S opened: it landed"), steered towards
recording money spent that never left the wallet.
On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jupcron.api.client import SPARE_WAIT, JupiterClient
from jupcron.domain import RunStatus
from jupcron.errors import ConfigError
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.runner.recovery import recover
from jupcron.store.follow import landed_evidence
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, order_plan, v2_orders, v2_rig

PAST_EXPIRY = 600  # seconds: well past the deposit's blockhash


def test_a_pending_deposit_is_no_evidence_that_an_in_doubt_run_landed(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = v2_rig(make_rig, db_url)
    rig.emulator.state.v2.unconfirmed = 2  # the create, and its re-post by recovery
    outcome = outcome_of(rig.runner().fire(order_plan(rig), SLOT))
    assert outcome.status is RunStatus.SUBMITTED, outcome
    clock.advance(PAST_EXPIRY)
    (settled,) = recover(rig.runner(), runs=[outcome.run_id])
    assert settled.status is RunStatus.IN_DOUBT, settled
    assert rig.landed() == []  # nothing moved
    (order,) = v2_orders(rig)
    (deposit,) = [e for e in order.events if e["type"] == "deposit"]
    assert deposit["state"] == "pending"

    client = JupiterClient(rig.url, api_key=None, transport=rig.transport, rate_limit=1000,
                           sleep=lambda s: None)  # fmt: skip
    try:
        session = trigger_v2_session(client, rig.wallet, clock)
        TriggerV2Follower(rig.engine, session, clock, spare=SPARE_WAIT).poll()
    finally:
        client.close()
    with rig.engine.connect() as conn:
        seen = landed_evidence(conn, outcome.run_id)
    assert seen is None, f"a pending deposit event was taken as proof of landing: {seen}"

    # the operator's true verdict is taken without --force
    verdict = Verdict(landed=False, reason="the explorer has no such signature", by="ops")
    try:
        run = settle_in_doubt(SqlRunStore(rig.engine), outcome.run_id, verdict,
                              now=datetime.now(UTC), seen=seen)  # fmt: skip
    except ConfigError as exc:  # pragma: no cover - the bug
        pytest.fail(f"--not-landed refused: {exc}")
    assert run.status is RunStatus.FAILED
