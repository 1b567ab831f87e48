"""`jupcron fire NAME` reads its config file again before it signs: a kill switch or
`safety.dry_run` turned on in the file while the fire's order call is under way stops
it, as a reload stops a daemon's runs. Before, the fire kept the config it started
with and signed and sent the swap the operator had just stopped. The CLI as a process
of its own, against the emulator over loopback."""

from __future__ import annotations

import pytest

from tests.e2e.test_fire_interrupted import fire_while_held
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan


@pytest.mark.parametrize(
    ("safety", "status", "error"),
    [
        ({"kill_switch": True}, "skipped", "kill switch is on"),
        ({"dry_run": True}, "dry_run", None),
    ],
)
def test_a_stop_written_in_the_config_during_the_order_call_reaches_the_fire(
    daemon_env: DaemonEnvFactory, safety: dict[str, object], status: str, error: str | None
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    env.emulator.faults.add("slow", count=1, operation="ultra_order", seconds=3)

    code, said = fire_while_held(env, "a", lambda _: env.write_config(safety=safety))

    (row,) = env.rows()
    assert (row["status"], row["signature"]) == (status, None), (row, said)
    assert error is None or error in str(row["error"]), row
    assert "Traceback" not in said
    assert env.emulator.ledger.landed() == []
    assert env.emulator.ledger.requests.get("execute_ultra") is None
    assert code == (1 if status == "skipped" else 0), said


def test_a_config_that_no_longer_loads_leaves_the_fire_on_the_one_it_started_with(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    env.emulator.faults.add("slow", count=1, operation="ultra_order", seconds=3)
    code, said = fire_while_held(env, "a", lambda _: env.config.write_text("safety: [broken\n"))
    (row,) = env.rows()
    assert row["status"] == "succeeded", (row, said)
    assert "the config does not load now" in said
    assert "Traceback" not in said
    assert code == 0, said
