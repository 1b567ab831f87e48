"""A Trigger V2 DCA order that completes between the cancel's look-up and its cancel
call (review 27k).

The cancel run reads the order in the wallet's history (still active), then asks for
the withdrawal; the last round filled in between, and the API answers 400 "Cannot
cancel DCA order in 'completed' state". The plan's aim holds (nothing is left to
withdraw): the run is `skipped` with ``order_gone``, as a v1 cancel's is, not `failed`
(a false alarm to the operator). Nothing is signed either way. Against the emulator
in-process, the order completed by the transport just before the cancel call."""

from __future__ import annotations

from typing import Any

import httpx

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from jupcron.emulator.transport import in_process_transport
from tests.fixtures.runner import Rig, RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, cancel_plan, open_dca


class CompletesFirst(httpx.BaseTransport):
    """The emulator, but a DCA cancel call finds its order completed (its last round
    filled after the run read the history)."""

    def __init__(self, rig: Rig) -> None:
        self.rig, self.inner = rig, in_process_transport(rig.emulator, sleep=lambda s: None)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and "/orders/dca/cancel/" in request.url.path:
            for order in self.rig.emulator.state.v2.orders.values():
                order.state = "completed"
        return self.inner.handle_request(request)


def test_a_dca_that_completes_before_the_cancel_call_skips_the_cancel(
    make_rig: RigFactory,
) -> None:
    rig = make_rig()
    order_id = open_dca(rig)
    api = JupiterClient.from_config(rig.config, None, transport=CompletesFirst(rig))
    try:
        outcome = outcome_of(rig.runner(api=api).fire(cancel_plan(rig, order_id), SLOT))
    finally:
        api.close()
    run = rig.run(outcome.run_id)
    detail: Any = (run.status, run.error_code, run.error)
    assert run.status is RunStatus.SKIPPED, detail
    assert run.error_code == "order_gone", detail
    assert run.signed_tx is None
