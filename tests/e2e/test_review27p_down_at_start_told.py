"""A dependency already down when the daemon starts is told by the start alert
(``daemon_start``), and `Dependencies` counts it as told, so its return is told later
(``dependency_down``: "works again"). With ``notify.events`` leaving ``daemon_start``
out, the operator who chose ``dependency_down`` was never told the RPC node was down,
yet was told, later, that it works again. It is now told as ``dependency_down`` when
the start alert does not carry it. The real daemon, to a local json:// receiver."""

from __future__ import annotations

from tests.fixtures.daemon import DaemonEnvFactory, swap_plan
from tests.fixtures.receivers import HttpReceiver, wait_for

DEAD_RPC = "http://127.0.0.1:9/rpc"  # nothing listens on the discard port


def _run_once(env_factory: DaemonEnvFactory, receiver: HttpReceiver, events: list[str]) -> str:
    env = env_factory()
    env.write_config(
        rpc={"url": DEAD_RPC},
        notify={"urls": [receiver.url], "batch": 0, "min_interval": 0, "events": events},
    )
    env.write_plans(swap_plan("later", {"every": "1d"}))
    env.apply()
    proc = env.start()
    said = wait_for(lambda: any("rpc" in b["message"] for b in receiver.bodies), timeout=30)
    assert env.stop(proc) == 0
    assert said, (receiver.bodies, env.log_of(proc))
    return "\n".join(b["message"] for b in receiver.bodies)


def test_down_at_start_is_told_as_dependency_down_without_the_start_alert(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    messages = _run_once(daemon_env, http_receiver, ["dependency_down", "daemon_stop"])
    assert "[dependency_down]" in messages, messages
    assert "[daemon_start]" not in messages


def test_with_the_start_alert_it_is_told_once_there(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    messages = _run_once(daemon_env, http_receiver, ["dependency_down", "daemon_start"])
    assert "[daemon_start]" in messages, messages
    assert "degraded: rpc" in messages, messages
    assert "[dependency_down]" not in messages, messages  # not twice
