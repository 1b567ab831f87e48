"""A create the API refuses outright on its first post is a failed run, also when
the JWT ran out between the deposit's craft and the create (the client logs in again
before posting): the login's own calls are not posts of the signed deposit, so they
must not make a first, clearly refused post look like a re-post (which is left
`submitted`, re-posted by every recovery, and reported `in_doubt`)."""

from __future__ import annotations

from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from tests.fixtures.runner import Clock, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, dca_plan, requests, v2_orders


def test_a_create_refused_after_a_fresh_login_fails_the_run(
    make_rig: RigFactory, db_url: str
) -> None:
    clock = Clock(SLOT)
    rig = make_rig(
        clock=clock, db_url=db_url, emulator=Emulator(seed=3, clock=clock.wall, jwt_ttl=120)
    )

    def age(attempt: object) -> None:
        if getattr(attempt, "operation", "") == "trigger_v2_deposit":
            clock.advance(70)  # 120 s JWT, refreshed a minute early: now it is stale

    plan = dca_plan(rig, inputAmount=39_000_000)  # 9.75 USDC a round: under the API's minimum
    outcome = outcome_of(rig.runner(on_attempt=age).fire(plan, SLOT))
    assert requests(rig, "trigger_v2_verify") == 2  # the fresh login before the create
    assert requests(rig, "trigger_v2_create_dca") == 1
    assert outcome.status is RunStatus.FAILED, (outcome.status, rig.steps(outcome.run_id))
    assert outcome.error is not None
    assert "Each order must be at least 10 USD" in outcome.error
    assert v2_orders(rig) == []
    assert rig.landed() == []
