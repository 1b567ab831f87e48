"""Crash tests: the daemon SIGKILLs itself at each step boundary of a run (a
failpoint), or is SIGKILLed from outside while execute is in flight; then it
is restarted. For every case: exactly one run row, exactly one order landed at
the emulator, and the run ends succeeded (or in_doubt) — never doubled, never lost."""

from __future__ import annotations

import signal
import subprocess

import pytest

from jupcron import failpoints
from jupcron.store.types import RunStatus
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, at, swap_plan

FINAL = {str(RunStatus.SUCCEEDED), str(RunStatus.IN_DOUBT)}


def _one_shot(env: DaemonEnv) -> None:
    written = at(0)
    env.write_plans(swap_plan("once", {"at": at(2), "grace": 120}))
    env.apply(now=written)


def _check_exactly_once(env: DaemonEnv) -> None:
    rows = env.rows()
    assert len(rows) == 1, rows
    assert rows[0]["status"] == "succeeded", rows
    landed = env.emulator.ledger.landed()
    assert len(landed) == 1
    assert rows[0]["signature"] == landed[0].signature
    assert rows[0]["request_id"] == landed[0].request_id


@pytest.mark.parametrize("point", failpoints.NAMES)
def test_sigkill_at_each_step_then_restart(daemon_env: DaemonEnvFactory, point: str) -> None:
    env = daemon_env()
    _one_shot(env)
    crashed = env.start({"JUPCRON_FAILPOINTS": point})
    try:
        code = crashed.wait(30)
    except subprocess.TimeoutExpired:
        crashed.kill()
        crashed.wait(10)
        pytest.fail(f"the daemon never reached {point} in 30 s:\n{env.log_of(crashed)}")
    assert code == -signal.SIGKILL, env.log_of(crashed)
    assert len(env.rows()) == 1  # the claim was stored before the crash
    restarted = env.start()
    assert env.wait_until(lambda: env.rows()[0]["status"] in FINAL, timeout=30), env.log_of(
        restarted
    )
    _check_exactly_once(env)
    assert env.stop(restarted) == 0


def test_sigkill_while_execute_is_in_flight(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.emulator.faults.add("slow", operation="execute_ultra", seconds=3)
    _one_shot(env)
    proc = env.start()
    assert env.wait_until(lambda: env.rows() and env.rows()[0]["status"] == "submitted", timeout=30)
    proc.kill()
    proc.wait(10)
    restarted = env.start()
    assert env.wait_until(lambda: env.rows()[0]["status"] in FINAL, timeout=30), env.log_of(
        restarted
    )
    _check_exactly_once(env)
    assert env.stop(restarted) == 0
