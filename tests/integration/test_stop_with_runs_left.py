"""A stop that leaves a run in flight (it outlived `runner.shutdown_timeout`) is still
said: the daemon (a real subprocess) tells `notify.urls` it stopped, and sends the
alerts it had gathered, before the process ends."""

from __future__ import annotations

from tests.fixtures.daemon import DaemonEnvFactory, at, swap_plan
from tests.fixtures.receivers import HttpReceiver, wait_for


def test_a_stop_with_a_run_left_in_flight_is_still_said(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    env = daemon_env()
    env.emulator.faults.add("slow", operation="execute_ultra", seconds=30)
    # a long batch: the start and leader alerts are still gathered when the stop comes
    env.write_config(
        notify={"urls": [http_receiver.url], "batch": 60, "min_interval": 0},
        runner={"shutdown_timeout": 1},
    )
    written = at(0)
    env.write_plans(swap_plan("once", {"at": at(2)}))
    env.apply(now=written)
    proc = env.start()
    assert env.wait_until(
        lambda: bool(env.rows()) and env.rows()[0]["status"] == "submitted", timeout=30
    ), env.log_of(proc)
    assert env.stop(proc) == 0  # SIGTERM while execute hangs: the run is left in flight
    log = env.log_of(proc)
    assert "runs_left_in_flight" in log, log
    assert wait_for(lambda: http_receiver.bodies, timeout=5), log
    messages = "\n".join(str(b.get("message")) for b in http_receiver.bodies)
    assert "[daemon_start]" in messages  # what was gathered is not lost
    assert "[daemon_stop] daemon on" in messages
    assert "left in flight" in messages  # and the operator is told why it matters
