"""Crash tests under group commit: twelve runs due in the same second on eight
workers share transactions; the daemon SIGKILLs itself at each step boundary
(on the fifth pass, so other runs' writes are in flight with it), then it is
restarted. Every slot has exactly one run, every succeeded run has exactly one
landed order (its own signature), nothing landed twice, nothing was lost."""

from __future__ import annotations

import signal
import subprocess

import pytest

from jupcron import failpoints
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, at, swap_plan

RUNS = 12
FINAL = {"succeeded", "in_doubt"}


def _burst(env: DaemonEnv) -> None:
    written = at(0)
    due = at(3)
    env.write_plans(*(swap_plan(f"p{n:02d}", {"at": due, "grace": 120}) for n in range(RUNS)))
    env.apply(now=written)


def _all_final(env: DaemonEnv) -> bool:
    rows = env.rows()
    return len(rows) == RUNS and all(r["status"] in FINAL for r in rows)


@pytest.mark.parametrize("point", failpoints.NAMES)
def test_sigkill_amid_a_burst_then_restart(daemon_env: DaemonEnvFactory, point: str) -> None:
    env = daemon_env()
    _burst(env)
    crashed = env.start({"JUPCRON_FAILPOINTS": f"{point}:5"})
    try:
        code = crashed.wait(60)
    except subprocess.TimeoutExpired:
        crashed.kill()
        crashed.wait(10)
        pytest.fail(f"the daemon never reached {point} in 60 s:\n{env.log_of(crashed)}")
    assert code == -signal.SIGKILL, env.log_of(crashed)
    restarted = env.start()
    assert env.wait_until(lambda: _all_final(env), timeout=60), (env.rows(), env.log_of(restarted))
    rows = env.rows()
    assert sorted(r["plan_name"] for r in rows) == [f"p{n:02d}" for n in range(RUNS)]  # one each
    landed = env.emulator.ledger.landed()
    assert len({o.signature for o in landed}) == len(landed)  # nothing landed twice
    by_request = {o.request_id: o.signature for o in landed}
    succeeded = [r for r in rows if r["status"] == "succeeded"]
    assert len(landed) == len(succeeded), (rows, landed)
    for row in succeeded:
        assert by_request.get(row["request_id"]) == row["signature"], row
    assert env.stop(restarted) == 0
