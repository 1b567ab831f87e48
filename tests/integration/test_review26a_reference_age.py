"""The reference price's age is judged when the feed is read, not when the run began.

The run's clock is read once at the start of its order step; the order call that
follows may wait minutes (the pacer, backoff, a 429's ``Retry-After``), and only then
are the Pyth feeds read. A feed that stopped updating when the run began, read
``price.max_age`` + a minute later, is that old: it is stale, and under the default
``price.on_stale: refuse`` nothing is signed against it (docs/price-protection.md).
Real SQLite store, real signing, the emulator's Pyth accounts; the API's 429 wait
runs on the rig's clock (the client's `sleep` seam), so no test time is spent."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from tests.fixtures.runner import Clock, Rig, RigFactory, outcome_of

SOL = "So11111111111111111111111111111111111111112"


def control(rig: Rig, path: str, body: Any) -> None:
    answer = rig.emulator.handle("POST", f"/_emulator/{path}", {}, {}, json.dumps(body).encode())
    assert answer.status == 200, answer.body


def _rig(make_rig: RigFactory, retry_after: int, count: int) -> tuple[Rig, Clock]:
    clock = Clock(datetime.now(UTC).replace(microsecond=0))
    rig = make_rig(clock=clock, swap_api="swap-v2")
    # the client waits out the 429 on the rig's clock (its sleep seam)
    rig.api = JupiterClient(
        rig.url, api_key=None, transport=rig.transport, rate_limit=1000,
        sleep=clock.advance, clock=clock.wall, wall=clock.wall,
    )  # fmt: skip
    control(rig, "oracle", {"mint": SOL, "freeze": True})  # SOL's feed stops now
    control(rig, "faults", {"kind": "rate_limit", "operation": "swap_order", "count": count,
                            "retry_after": retry_after})  # fmt: skip
    return rig, clock


def test_a_feed_gone_stale_while_the_order_call_waited_refuses_to_sign(
    make_rig: RigFactory,
) -> None:
    """The feed froze as the run began; the order call waited out two 429s of 100 s
    each (well within api.max_attempts): the reference read after them is 200 s old
    (price.max_age 120). The run must not be signed with it taken for fresh."""
    rig, clock = _rig(make_rig, retry_after=100, count=2)
    began = clock.now
    plan = rig.plan("swap", name="reference-only")  # no limits: the reference is its guard
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, began))
    assert (clock.now - began).total_seconds() >= 200
    (detail,) = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.REJECTED, (
        f"signed against a reference {int((clock.now - began).total_seconds())} s old "
        f"(price.max_age {rig.config.price.max_age:g}): {detail['price']}"
    )
    assert "stale" in detail["price"]["problem"]
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.landed() == []


def test_a_feed_still_fresh_after_a_short_wait_signs(make_rig: RigFactory) -> None:
    """The same wait well inside max_age: the reference is fresh, the swap lands."""
    rig, clock = _rig(make_rig, retry_after=30, count=1)
    plan = rig.plan("swap", name="reference-only")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, clock.now))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    (detail,) = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    assert detail["price"]["reference_out"] is not None
    assert "problem" not in detail["price"]
