"""Ctrl-C (SIGINT) in the middle of `jupcron fire NAME`, the CLI as a process of its own
against the emulator over loopback.

Before anything is signed, the interrupt withdraws the fire: before, the run was left
`pending`, and the next recovery (a daemon's start, or its next pass once the run went
stale: a manual run has no grace to run out) ordered, signed and sent the swap the
operator had stopped, however much later. Once signed, the run stays in flight for
recovery (its transaction may land), and the command says which run that is.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable

from jupcron.app import build_runtime
from jupcron.config import load_config
from jupcron.runner.recovery import recover
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.support import clifork


def fire_while_held(
    env: DaemonEnv, name: str, meanwhile: Callable[[subprocess.Popen[bytes]], object]
) -> tuple[int, str]:
    """`jupcron fire NAME`; once the emulator holds its slow call, `meanwhile(process)`;
    the fire's exit status and output."""
    log = env.root / "fire.log"
    log.write_text("")
    proc = clifork.start(["--config", str(env.config), "fire", name], env=env._env({}), stdout=log)
    try:
        assert env.wait_until(lambda: env.emulator.faults.history != [])
        meanwhile(proc)
        code = proc.wait(60)
    except (AssertionError, subprocess.TimeoutExpired):
        proc.kill()
        raise
    return code, log.read_text()


def interrupted_fire(env: DaemonEnv, name: str) -> tuple[int, str]:
    """`jupcron fire NAME`, sent SIGINT once the emulator holds its slow call."""
    return fire_while_held(env, name, lambda proc: proc.send_signal(signal.SIGINT))


def startup_recovery(env: DaemonEnv) -> list[str]:
    """What a daemon starting on this store does to the runs left in flight."""
    runtime = build_runtime(load_config(env.config))
    try:
        return [str(outcome.status) for outcome in recover(runtime.runner, startup=True)]
    finally:
        runtime.close()


def test_ctrl_c_before_signing_withdraws_the_fire(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    env.emulator.faults.add("slow", count=1, operation="ultra_order", seconds=5)

    code, said = interrupted_fire(env, "a")

    assert code == 130, said
    (row,) = env.rows()
    assert (row["status"], row["signature"]) == ("skipped", None), row
    assert f"run {row['run_id']}" in said
    assert "skipped" in said
    assert "Traceback" not in said
    # nothing is left for recovery to order: the operator stopped this swap
    assert startup_recovery(env) == []
    assert [r["status"] for r in env.rows()] == ["skipped"]
    assert env.emulator.ledger.landed() == []
    assert env.emulator.ledger.requests.get("ultra_order") == 1  # the interrupted one only


def test_sigterm_before_signing_withdraws_the_fire_as_ctrl_c_does(
    daemon_env: DaemonEnvFactory,
) -> None:
    """A wrapper's SIGTERM (``timeout``, a stopped unit): the same as Ctrl-C, said with
    SIGTERM's status. Before, the process died where it was, silently, and left the run
    `pending` for the next recovery to order."""
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    env.emulator.faults.add("slow", count=1, operation="ultra_order", seconds=5)

    code, said = fire_while_held(env, "a", lambda proc: proc.send_signal(signal.SIGTERM))

    assert code == 143, said
    (row,) = env.rows()
    assert (row["status"], row["signature"]) == ("skipped", None), row
    assert f"run {row['run_id']}" in said
    assert "Traceback" not in said
    assert startup_recovery(env) == []
    assert env.emulator.ledger.landed() == []


def test_ctrl_c_after_signing_names_the_run_left_for_recovery(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    env.emulator.faults.add("slow", count=1, operation="execute_ultra", seconds=5)

    code, said = interrupted_fire(env, "a")

    assert code == 130, said
    (row,) = env.rows()
    assert row["status"] == "submitted"  # its transaction may land: never withdrawn
    assert f"run {row['run_id']}" in said
    assert "submitted" in said
    assert row["signature"] in said
    assert "Traceback" not in said
    # recovery settles it with the same signed transaction
    assert startup_recovery(env) == ["succeeded"]
    (after,) = env.rows()
    assert (after["status"], after["signature"]) == ("succeeded", row["signature"])
    assert [e.signature for e in env.emulator.ledger.landed()] == [row["signature"]]
