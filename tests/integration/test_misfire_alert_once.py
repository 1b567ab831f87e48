"""Slots missed while the daemon was down are said once per plan, not once per slot:
the real daemon (a subprocess) catches up a plan's 30 missed slots, and the JSON
webhook and `notify.urls` (real loopback receivers) each get one misfire for it."""

from __future__ import annotations

from tests.fixtures.daemon import DaemonEnvFactory, at, swap_plan
from tests.fixtures.receivers import HttpReceiver, wait_for


def test_missed_slots_are_one_misfire_per_plan(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    hook = HttpReceiver()  # the older webhook, on its own receiver
    hook.thread.start()
    try:
        env = daemon_env()
        hook_url = f"http://127.0.0.1:{hook.server.server_address[1]}/hook"
        env.write_config(
            notify={"urls": [http_receiver.url], "webhook_url": hook_url, "batch": 2,
                    "min_interval": 0},
        )  # fmt: skip
        env.write_plans(swap_plan("missed", {"every": "10s", "misfire": "skip"}))
        env.apply(now=at(-300))  # in effect 5 minutes ago: 30 slots passed unfired
        proc = env.start()
        seen = lambda: [b for b in hook.bodies if b.get("event") == "misfire"]  # noqa: E731
        assert wait_for(lambda: seen() and http_receiver.bodies, timeout=30), env.log_of(proc)
        assert env.stop(proc) == 0
        skipped = env.rows("status = 'skipped'")
        assert len(skipped) >= 29  # every missed slot is recorded
        (misfire,) = seen()  # ... and said once
        assert misfire["plan"] == "missed"
        assert misfire["missed"] == len(skipped)
        assert str(len(skipped)) in misfire["text"]
        messages = "\n".join(str(b.get("message")) for b in http_receiver.bodies)
        assert messages.count("[misfire]") == 1, messages
    finally:
        hook.server.shutdown()
        hook.server.server_close()
