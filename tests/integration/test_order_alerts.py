"""Money waiting in an order reaches the operator, once: a Trigger V2 price order that
expired unfilled (the emulator's keeper, past its ``expiresAt``) keeps its deposit in
the vault until a cancel withdraws it. The follower records it as held; the follower
loop hands that event to `notify.urls` (Apprise, a real loopback receiver) and the
older webhook (another loopback receiver) once, and neither a second poll nor a
restarted loop (a new process: new `Alerts`, new notifier, the same store) says it
again."""

from __future__ import annotations

from typing import Any

from jupcron.follower import FollowerLoop
from jupcron.runner.core import trigger_v2_session
from jupcron.service.alerts import Alerts
from jupcron.service.apprise_channel import apprise_sender
from jupcron.service.duties import order_notices
from jupcron.service.webhook import WebhookNotifier
from tests.fixtures.follow import FollowRig, FollowRigFactory
from tests.fixtures.receivers import HttpReceiver, wait_for
from tests.fixtures.trigger_v2 import ORDER_REQUEST, v2_orders

DAY = 86_400


class _Process:
    """What one daemon process holds: its alerts, its webhook, its follower loop."""

    def __init__(self, f: FollowRig, apprise: HttpReceiver, hook: HttpReceiver) -> None:
        port = hook.server.server_address[1]
        self.alerts = Alerts(apprise_sender([apprise.url]), batch=0.0, min_interval=0.0).start()
        self.webhook = WebhookNotifier(f"http://127.0.0.1:{port}/hook").start()
        session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
        self.loop = FollowerLoop(
            f.engine, f.client(), f.rig.wallet.address, interval=3600, clock=f.clock,
            trigger_v2=session, notify=order_notices(self.alerts.note, self.webhook),
        )  # fmt: skip

    def stop(self) -> None:
        self.alerts.stop()
        self.webhook.stop()


def _hook_bodies(hook: HttpReceiver) -> list[dict[str, Any]]:
    return [b for b in hook.bodies if b.get("event") == "order_held"]


def _apprise_lines(apprise: HttpReceiver) -> list[str]:
    return [line for b in apprise.bodies for line in str(b.get("message")).splitlines()
            if "[order_held]" in line]  # fmt: skip


def test_a_held_order_reaches_apprise_and_the_webhook_once_across_polls_and_a_restart(
    make_follow_rig: FollowRigFactory, db_url: str, http_receiver: HttpReceiver
) -> None:
    hook = HttpReceiver()
    hook.thread.start()
    try:
        f = make_follow_rig(db_url)
        first = _Process(f, http_receiver, hook)
        f.fire(f.rig.plan("trigger-v2-order", ORDER_REQUEST, name="v2-price"))
        (order,) = v2_orders(f.rig)
        f.clock.advance(8 * DAY)  # expiresAfter: 7d, the trigger price never met
        first.loop.poll_once()
        assert order.state == "expired"
        assert wait_for(lambda: _hook_bodies(hook) and _apprise_lines(http_receiver), 10)
        first.loop.poll_once()  # the next poll: nothing new to say
        first.stop()  # delivers what is pending
        second = _Process(f, http_receiver, hook)  # a restart: same store
        second.loop.poll_once()
        second.stop()

        (body,) = _hook_bodies(hook)
        assert (body["plan"], body["order"]) == ("v2-price", order.id)
        assert "trigger-v2-cancel" in body["text"]
        assert str(ORDER_REQUEST["inputAmount"]) in body["text"]
        (line,) = _apprise_lines(http_receiver)
        for fact in ("v2-price", order.id, "trigger-v2-cancel"):
            assert fact in line
        assert any(b.get("type") == "failure" for b in http_receiver.bodies)  # severe
    finally:
        hook.server.shutdown()
        hook.server.server_close()
