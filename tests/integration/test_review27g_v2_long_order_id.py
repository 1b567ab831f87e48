"""A Trigger V2 create answered with an order id longer than any the store can hold
(the column of a run's order is 64 characters; V2 ids are UUIDs): an unreadable
answer, settled as one (here from the history, which shows our deposit), never a
run whose final write fails.

Before: the create's answer took an id of any length; the run's result (its
``order_account``, in ``runs`` and ``execute_results``) was refused by PostgreSQL's
VARCHAR(64), so the write of a run whose deposit had landed failed: the drive ended
in a database error and the run was left in flight, its money in the vault and no
record of its order, at every recovery again. On SQLite and PostgreSQL."""

from __future__ import annotations

import json

import httpx

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.trigger_v2 import SLOT, dca_plan, v2_orders

LONG = "7" * 65


class LongIds(httpx.BaseTransport):
    """The rig's emulator, but a create's answer names an id of `LONG`."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "POST" or not request.url.path.endswith("/orders/dca"):
            return response
        data = json.loads(response.read())
        if isinstance(data, dict) and "id" in data:
            data["id"] = LONG
        return httpx.Response(response.status_code, content=json.dumps(data).encode(),
                              headers={"content-type": "application/json"})  # fmt: skip


def test_a_create_answer_with_an_oversized_order_id_is_settled_not_stuck(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url)
    assert rig.transport is not None
    api = JupiterClient(rig.url, api_key=None, transport=LongIds(rig.transport),
                        rate_limit=1000, sleep=lambda s: None)  # fmt: skip
    try:
        outcome = outcome_of(rig.runner(api=api).fire(dca_plan(rig), SLOT))
    finally:
        api.close()
    (order,) = v2_orders(rig)
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SUCCEEDED, (run.status, run.error)
    assert run.order_account == order.id  # the history's, not the oversized answer's
