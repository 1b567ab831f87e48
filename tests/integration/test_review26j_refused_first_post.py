"""An execute that the swap API refuses at the request level, on the first post of the
run's bytes, is a clean failure: nothing of them was sent, so nothing can land.

Jupiter's "Ultra Endpoint Codes" (ultra/response.mdx: -1 missing cached order, -2
invalid signed transaction, -3 invalid message bytes, -4/-5 missing fields) come back
as the specs' 400 ``{error, code}`` with no ``status`` (the docs' -1 example;
openapi-spec/ultra/ultra.yaml and swap/v2/swap.yaml, execute 400). The runner already
trusts a first post's -1 enough to order afresh inside the slot's grace; when no fresh
order may follow (past the grace), the run was left ``submitted`` and then made
``in_doubt`` ("execute gave no answer ... check the signature on-chain") though the API
had answered and nothing could land: a clean failure the operator had to settle by hand.

Real SQLite, real signing, the emulator (in process; a -2 is the specs' 400 shape put on
the emulator's answer by a transport seam, as the emulator answers its own -2 at 200)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from jupcron import failpoints
from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from jupcron.emulator.transport import in_process_transport
from jupcron.runner.recovery import recover
from tests.fixtures.runner import Clock, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
SHORT_GRACE = {"every": "1h", "grace": 60}


@pytest.fixture(autouse=True)
def _disarm() -> Iterator[None]:
    yield
    failpoints.disarm()


def test_a_signed_ultra_run_posted_after_its_request_expired_and_its_grace_fails(
    make_rig: RigFactory,
) -> None:
    """Signed, then the daemon was down past the grace and the requestId's life: the
    recovery's post is the first of these bytes and is answered -1 (not found)."""
    clock = Clock(SLOT)
    rig = make_rig(clock=clock)
    plan = rig.plan("swap", schedule=SHORT_GRACE)
    run_id = rig.signed_then_crashed(plan, SLOT)
    clock.advance(600)  # the requestId (about 2 minutes) and the blockhash are gone
    (outcome,) = recover(rig.runner(), startup=True)  # no RPC node configured
    assert outcome.status is RunStatus.FAILED, (outcome.error, rig.steps(run_id))
    run = rig.run(run_id)
    assert run.status is RunStatus.FAILED, (run.status, run.error, rig.steps(run_id))
    assert run.error_code == "-1"
    assert run.error is not None
    assert "never landed" in run.error
    assert rig.landed() == []
    assert rig.issued() == 1  # past the grace: no fresh order
    assert recover(rig.runner(), startup=True) == []  # settled: nothing left in flight


class StatuslessRefusal(httpx.BaseTransport):
    """The emulator, with its first swap execute answered as the specs' 400 for a
    request-level refusal: ``{"code": -2, "error": ...}``, no ``status``, nothing sent."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.refused = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/execute") and not self.refused:
            self.refused += 1
            body = {"code": -2, "error": "Invalid signed transaction"}
            return httpx.Response(400, content=json.dumps(body).encode(), request=request)
        return self.inner.handle_request(request)


@pytest.mark.parametrize("api", ["ultra-v1", "swap-v2"])
def test_a_statusless_refusal_of_the_first_post_is_failed_not_in_doubt(
    make_rig: RigFactory, api: str
) -> None:
    rig = make_rig(swap_api=api)
    seam = StatuslessRefusal(in_process_transport(rig.emulator, sleep=lambda s: None))
    client = JupiterClient.from_config(rig.config, None, transport=seam)
    try:
        outcome = outcome_of(rig.runner(api=client).fire(rig.plan("swap"), SLOT))
    finally:
        client.close()
    run = rig.run(outcome.run_id)
    assert seam.refused == 1
    assert run.status is RunStatus.FAILED, (run.status, run.error, rig.steps(run.id))
    assert run.error_code == "-2"
    assert run.error is not None
    assert run.error.startswith("Invalid signed transaction")
    assert "never landed" in run.error
    assert rig.landed() == []
    assert rig.issued() == 1  # -2: bytes the API will not take; no fresh order for them
