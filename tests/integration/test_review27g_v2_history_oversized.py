"""A Trigger V2 history order with a value too big for its column (an amount beyond
u64, a transaction id longer than any signature, a state or a mint longer than the
store keeps): a problem of that one order, told as ``follow_answer_invalid``; the
other orders of the page are recorded as usual.

Before: the V2 history's parser took any length and any digits (v1's listings were
bounded, V2's were not); on PostgreSQL (the columns are VARCHAR(n)) the write of
that one order failed, which ended the family's whole poll at that order, at every
poll while the history said it: the rounds, cancels and refunds of every order of
ours after it on the page were never stored, and the only trace was a
``follower_poll_interrupted`` log line (no follow event). On SQLite the garbage
was stored as a fill. Against the emulator over loopback."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from jupcron.api.client import SPARE_WAIT, JupiterClient
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from jupcron.store import follow
from tests.fixtures.follow import FollowRig, FollowRigFactory
from tests.fixtures.trigger_v2 import DCA_REQUEST

DAY = 86_400
U64_MAX = 2**64 - 1
Edit = Callable[[dict[str, Any]], dict[str, Any]]


def _fills(edit: Callable[[dict[str, Any]], dict[str, Any]]) -> Edit:
    return lambda o: {**o, "events": [edit(e) if e.get("type") == "fill" else e
                                      for e in o["events"]]}  # fmt: skip


OVERSIZED: dict[str, Edit] = {
    "amount beyond u64": _fills(lambda e: {**e, "outputAmount": "9" * 41}),
    "fill signature too long": _fills(lambda e: {**e, "txSignature": "T" * 101}),
    "state too long": lambda o: {**o, "state": "s" * 33},
    "output mint too long": lambda o: {**o, "outputMint": "M" * 65},
}


def _history_edited(f: FollowRig, order_id: str, edit: Edit) -> JupiterClient:
    """A client of the rig's emulator whose V2 history answers pass order `order_id`
    through `edit`."""
    inner = f.rig.transport
    assert inner is not None

    class Edited(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = inner.handle_request(request)
            if "/orders/history" not in request.url.path:
                return response
            data = json.loads(response.read())
            data["orders"] = [edit(o) if o.get("id") == order_id else o for o in data["orders"]]
            return httpx.Response(response.status_code, content=json.dumps(data).encode(),
                                  headers={"content-type": "application/json"})  # fmt: skip

    api = JupiterClient(f.rig.url, api_key=None, transport=Edited(), rate_limit=1000,
                        sleep=lambda s: None)  # fmt: skip
    f._clients.append(api)
    return api


@pytest.mark.parametrize("field", list(OVERSIZED))
def test_an_oversized_value_in_one_v2_order_does_not_stop_the_others_being_recorded(
    make_follow_rig: FollowRigFactory, db_url: str, field: str
) -> None:
    f = make_follow_rig(db_url)
    f.fire(f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="good"))
    f.clock.advance(60)  # the newer order is listed first: the bad one, read before
    bad_run = f.fire(f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="bad"))
    bad = f.rig.run(bad_run).order_account
    assert bad is not None
    f.clock.advance(DAY // 2)  # each order's first round is filled, both still active

    session = trigger_v2_session(_history_edited(f, bad, OVERSIZED[field]), f.rig.wallet, f.clock)
    (dca, _) = TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT).poll()
    assert dca.errors >= 1
    assert len(f.fills("good")) == 1  # the other order of the page is recorded
    assert f.fills("bad") == []
    with f.engine.connect() as conn:
        invalid = follow.events(conn, "follow_answer_invalid")
    assert invalid, "the oversized value is a recorded problem"


def test_an_amount_of_u64s_largest_is_kept_digit_for_digit(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    run = f.fire(f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="top"))
    order = f.rig.run(run).order_account
    assert order is not None
    f.clock.advance(DAY // 2)
    edit = _fills(lambda e: {**e, "outputAmount": str(U64_MAX)})
    session = trigger_v2_session(_history_edited(f, order, edit), f.rig.wallet, f.clock)
    TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT).poll()
    assert [r["out_amount"] for r in f.fills("top")] == [str(U64_MAX)]
