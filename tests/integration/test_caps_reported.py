"""What a cap counts for a run that succeeded: what the run committed (the plan's
amount, which txguard let the signed transaction spend at most), never a smaller
figure the execute answer reports. A buggy or hostile API that says
``totalInputAmount: "5"`` (UI units) for a 5 USDC swap must not free the cap."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx

from jupcron.api.client import JupiterClient
from jupcron.domain import RunStatus
from tests.fixtures.runner import USDC, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def understating(inner: httpx.BaseTransport) -> httpx.BaseTransport:
    """The emulator, its execute answers saying the input in UI units."""

    class Understate(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = inner.handle_request(request)
            if not request.url.path.endswith("/execute"):
                return response
            body = json.loads(response.read())
            if "totalInputAmount" in body:
                body["totalInputAmount"] = "5"
            return httpx.Response(response.status_code, json=body)

    return Understate()


def test_a_cap_counts_the_committed_amount_not_the_answers_smaller_one(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url, safety={"caps": [{"mint": USDC, "per_day": 12_000_000}]})
    assert rig.transport is not None
    api = JupiterClient(rig.url, api_key=None, transport=understating(rig.transport),
                        rate_limit=1000, sleep=lambda s: None)  # fmt: skip
    try:
        runner = rig.runner(api=api)
        outcomes = [outcome_of(runner.fire(rig.plan("swap"), SLOT)) for _ in range(4)]
    finally:
        api.close()
    statuses = [o.status for o in outcomes]
    # 5 USDC a run left the wallet each time: two fit under 12 USDC, the third does not
    assert statuses == [RunStatus.SUCCEEDED] * 2 + [RunStatus.SKIPPED] * 2
    assert len(rig.landed()) == 2
    skipped = outcomes[2].error
    assert skipped is not None
    assert "per_day=12000000 (wallet default) would be exceeded: 10000000 already" in skipped
