"""A Trigger V2 run's create carries the terms the run was claimed with: a plan edited
between signing and the post (the daemon died after signing; the owner changed the
plan's trigger price or rounds before recovery) does not change the order the signed
deposit opens. DESIGN §2: signed bytes judged under the claimed terms may still be
posted; what they buy may not change under them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from tests.fixtures.runner import SOL, RigFactory
from tests.fixtures.trigger_v2 import (
    DCA_REQUEST,
    ORDER_REQUEST,
    SLOT,
    dca_plan,
    order_plan,
    v2_orders,
)


@pytest.fixture(autouse=True)
def _disarmed() -> Iterator[None]:
    yield
    failpoints.disarm()


def _edit(rig: Any, plan_id: int, request: dict[str, Any]) -> None:
    with transaction(rig.factory) as session:  # `plans apply` of an edited file
        row = session.get(Plan, plan_id)
        assert row is not None
        row.request, row.version = request, 2


def test_a_price_order_signed_before_an_edit_opens_at_the_claimed_trigger_price(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    plan = order_plan(rig)  # triggerPriceUsd 200, above
    run_id = rig.signed_then_crashed(plan, SLOT)
    _edit(rig, plan.id, {**ORDER_REQUEST, "triggerPriceUsd": "150", "triggerCondition": "below"})
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED], outcomes
    (order,) = v2_orders(rig)
    assert order.deposit_signature == rig.run(run_id).signature
    assert (order.trigger_condition, order.trigger_price_usd) == ("above", 200.0)


def test_a_dca_signed_before_an_edit_opens_with_the_claimed_rounds(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    plan = dca_plan(rig)  # 4 rounds, a day apart
    rig.signed_then_crashed(plan, SLOT)
    _edit(rig, plan.id, {**DCA_REQUEST, "orderCount": 2, "intervalSeconds": 60})
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED], outcomes
    (order,) = v2_orders(rig)
    assert (order.order_count, order.interval) == (4, 86_400)


def test_a_price_band_kept_for_the_create_is_sent_as_the_exact_number(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    band = {"orderType": "price_conditional", "triggerMint": SOL, "minPriceUsd": "100.25"}
    plan = dca_plan(rig, **band)
    rig.signed_then_crashed(plan, SLOT)
    _edit(rig, plan.id, {**DCA_REQUEST, **band, "minPriceUsd": "1"})
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED], outcomes
    (order,) = v2_orders(rig)  # the emulator takes only a JSON number as a price
    assert (order.order_type, order.min_price_usd) == ("price_conditional", 100.25)
