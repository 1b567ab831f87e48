"""A Trigger V2 order stuck mid-cancel: its withdrawal crafted, never confirmed (here
the guard refused it). The docs (jup-ag/docs trigger/lifecycle.mdx, Cancellation and
Recovery; trigger/dca-cancel.mdx; trigger/order-history.mdx) say the order then stops
filling at once and never goes back: a DCA stays ``withdrawing``, a price order
``pending_withdraw`` (raw ``ready_to_cancel``), "the deposit remains in the vault"
until a withdrawal confirms, and calling cancel again crafts a fresh withdrawal
(idempotent). So the follower must not keep showing it as open: once it has stayed
mid-cancel past the time our own cancel takes, it is held, with one ``order_held``
event saying how to get the funds back; re-running the cancel plan withdraws them.
On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from typing import Any

import pytest

from jupcron.api.client import SPARE_WAIT
from jupcron.domain import RunStatus
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from tests.fixtures.follow import FollowRig, FollowRigFactory
from tests.fixtures.runner import outcome_of
from tests.fixtures.trigger_v2 import DCA_REQUEST, ORDER_REQUEST, v2_orders

HOUR = 3600


def _follower(f: FollowRig) -> TriggerV2Follower:
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    return TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)


def _stored(f: FollowRig, order_id: str) -> dict[str, Any]:
    (row,) = f.sql("SELECT * FROM followed_orders WHERE order_account = :o", o=order_id)
    return row


def _told(f: FollowRig, order_id: str) -> list[dict[str, Any]]:
    return f.sql("SELECT step, detail FROM follow_events WHERE order_account = :o", o=order_id)


@pytest.mark.parametrize(
    ("kind", "request_", "family", "stuck"),
    [
        ("trigger-v2-dca", DCA_REQUEST, "dca", "withdrawing"),
        ("trigger-v2-order", ORDER_REQUEST, "price", "ready_to_cancel"),  # its rawState
    ],
)
def test_an_order_stuck_mid_cancel_is_held_told_once_and_a_second_cancel_withdraws_it(
    make_follow_rig: FollowRigFactory,
    db_url: str,
    kind: str,
    request_: dict[str, Any],
    family: str,
    stuck: str,
) -> None:
    f = make_follow_rig(db_url)
    follower = _follower(f)
    f.fire(f.rig.plan(kind, request_, name="v2-open"))
    (order,) = v2_orders(f.rig)
    cancel = f.rig.plan("trigger-v2-cancel", {"order": order.id, "family": family},
                        name="v2-stop")  # fmt: skip
    f.rig.emulator.faults.add("hostile", operation="trigger_v2_cancel")
    refused = outcome_of(f.rig.runner().fire(cancel, f.clock.now.replace(microsecond=0)))
    assert refused.status is RunStatus.REJECTED, refused
    assert order.state in ("withdrawing", "ready_to_cancel")  # the API stopped it
    follower.poll()
    # just now: our own cancel may still be confirming it, nothing to say yet
    assert _stored(f, order.id)["api_status"] == stuck
    assert _stored(f, order.id)["state"] == "open"
    assert _told(f, order.id) == []
    f.clock.advance(HOUR)
    follower.poll()
    assert (_stored(f, order.id)["state"], _stored(f, order.id)["api_status"]) == ("held", stuck)
    assert _stored(f, order.id)["closed_at"] is None
    (event,) = _told(f, order.id)
    assert event["step"] == "order_held"
    assert f"family: {family}" in str(event["detail"])
    follower.poll()
    assert len(_told(f, order.id)) == 1  # said once
    # the documented way out: cancel again crafts a fresh withdrawal
    f.fire(cancel)
    assert order.state == "cancelled"
    follower.poll()
    assert _stored(f, order.id)["state"] == "cancelled"
    assert [e["step"] for e in _told(f, order.id)] == ["order_held", "order_cancelled"]
