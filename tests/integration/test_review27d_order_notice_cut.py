"""The line that says how to get held money back reaches `notify.urls` whole.

Every alert's text is cut at 300 characters (`TEXT_LIMIT`, meant for a run's error,
which may quote a long API answer). A held order's line is ours, and long: the plan,
the run, the order id, what waits, then how to withdraw it (a trigger-v2-cancel plan
with the order id *and its family*, fired again if one was left mid-way), about 300
characters before the plan's name is counted. With a plan named as operators name
them (here 40 characters), the cut fell in the withdrawal recipe: its family, or the
advice to fire it again, was lost, in the alert about money waiting in a vault.
"""

from __future__ import annotations

import threading

from jupcron.follower import FollowerLoop
from jupcron.runner.core import trigger_v2_session
from jupcron.service.alerts import Alerts
from jupcron.service.duties import order_notices
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.trigger_v2 import ORDER_REQUEST, v2_orders

DAY = 86_400
PLAN = "weekly-sol-to-usdc-above-250-usd-limit-v2"  # 41 characters


class Recorder:
    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.sent = threading.Event()

    def __call__(self, title: str, body: str, severe: bool) -> bool:
        self.bodies.append(body)
        self.sent.set()
        return True


def test_a_held_orders_withdrawal_recipe_is_not_cut(
    make_follow_rig: FollowRigFactory, sqlite_url: str
) -> None:
    f = make_follow_rig(sqlite_url)
    sender = Recorder()
    alerts = Alerts(sender, batch=0, min_interval=0).start()
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    loop = FollowerLoop(
        f.engine, f.client(), f.rig.wallet.address, interval=3600, clock=f.clock,
        trigger_v2=session, notify=order_notices(alerts.note, None),
    )  # fmt: skip
    f.fire(f.rig.plan("trigger-v2-order", ORDER_REQUEST, name=PLAN))
    (order,) = v2_orders(f.rig)
    f.clock.advance(8 * DAY)  # expiresAfter: 7d, the trigger price never met
    loop.poll_once()
    assert sender.sent.wait(10)
    alerts.stop()

    (line,) = [x for b in sender.bodies for x in b.splitlines() if "[order_held]" in x]
    recipe = f"a trigger-v2-cancel plan with order: {order.id}, family: price"
    assert recipe in line, line
    assert line.endswith("(fire it again if one was left mid-way)"), line
