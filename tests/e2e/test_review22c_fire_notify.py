"""Review 22c: `jupcron fire` never reports a run it signed and landed as a failure.

Before: with a ``notify.urls`` entry Apprise does not understand (the daemon refuses
to start on it; `config check` only says ``fail notify``), `jupcron fire NAME`
ordered, signed and landed the swap, printed ``run 1 … succeeded``, then built the
notifier, met the URL, and ended ``error: notify.urls[0] …`` with exit 1. A script
(or an operator) that retries a failed fire bought twice. Now the notifier is made
before anything is ordered: the same URL refuses the fire, nothing signed."""

from __future__ import annotations

from tests.fixtures.daemon import DaemonEnvFactory, swap_plan
from tests.fixtures.receivers import HttpReceiver


def test_an_unusable_notify_url_refuses_the_fire_before_anything_is_signed(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    env.write_config(notify={"urls": ["bogus://token@host"]})
    done = env.jupcron("fire", "manual")
    landed = env.emulator.ledger.landed()
    assert not (landed and done.returncode != 0), (
        f"the swap landed ({landed[0].signature}) and fire exited {done.returncode}: "
        f"{done.stderr.strip()}"
    )
    assert done.returncode == 1, done.stdout
    assert landed == []
    assert env.rows() == []  # no run recorded: nothing was claimed
    assert done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]  # (Apprise's own log line may come first)
    assert last.startswith("error: notify.urls[0] (bogus://…): not a notification URL"), last


def test_a_good_notify_url_still_says_the_manual_fire(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    """The notifier, now made before the fire, still sends its message after it."""
    env = daemon_env()
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    env.write_config(notify={"urls": [http_receiver.url]})
    done = env.jupcron("fire", "manual")
    assert done.returncode == 0, done.stderr
    assert len(env.emulator.ledger.landed()) == 1
    said = " ".join(str(b.get("message")) for b in http_receiver.bodies)
    assert "manual fire of plan manual" in said, http_receiver.bodies
