"""An order whose money waits is said in token units, not only in bare base units.

A Trigger V2 price order of 0.2 SOL expired unfilled (the emulator's keeper, past its
``expiresAt``): its deposit waits in the vault. The operator's line said
``200000000 of So111…112 waits in the vault``: two hundred million of a mint address,
read at 3 a.m. as a fortune or a typo. The mint's decimals are known to the store
(SOL is one of the built-in mints), so the line says ``0.2 SOL`` (the base units
kept beside it, for the withdrawal and the audit).
"""

from __future__ import annotations

from jupcron.follower import FollowerLoop
from jupcron.runner.core import trigger_v2_session
from jupcron.service.alerts import AlertEvent
from jupcron.service.duties import order_notices
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.trigger_v2 import ORDER_REQUEST, v2_orders

DAY = 86_400


def test_a_held_order_says_what_waits_in_token_units(
    make_follow_rig: FollowRigFactory, sqlite_url: str
) -> None:
    f = make_follow_rig(sqlite_url)
    said: list[tuple[AlertEvent, str]] = []
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    loop = FollowerLoop(
        f.engine, f.client(), f.rig.wallet.address, interval=3600, clock=f.clock,
        trigger_v2=session, notify=order_notices(lambda e, t: said.append((e, t)), None),
    )  # fmt: skip
    f.fire(f.rig.plan("trigger-v2-order", ORDER_REQUEST, name="v2-price"))
    (order,) = v2_orders(f.rig)
    f.clock.advance(8 * DAY)  # expiresAfter: 7d, the trigger price never met
    loop.poll_once()
    assert order.state == "expired"

    (line,) = [t for e, t in said if e is AlertEvent.ORDER_HELD]
    assert "0.2 SOL" in line, line
    assert str(ORDER_REQUEST["inputAmount"]) in line  # the base units still there
