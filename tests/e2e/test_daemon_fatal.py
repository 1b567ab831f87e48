"""A refused API key is fatal (DESIGN: needs a human): the daemon asks the API once at
start (issue 28: not at the first run, a week later for a weekly plan) and stops with
exit 1 and the fix, before any slot is claimed; nothing ordered, nothing signed."""

from __future__ import annotations

from jupcron.emulator import Emulator
from tests.fixtures.daemon import DaemonEnvFactory, at, swap_plan


def test_a_refused_api_key_stops_the_daemon_with_exit_one(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env(emulator=Emulator(seed=11, api_key="the-right-key"))
    due = at(4)
    env.write_plans(swap_plan("once", {"at": due}))
    env.apply(now=at(-60))
    proc = env.start({"JUPITER_API_KEY": "a-wrong-key"})
    code = proc.wait(60)
    log = env.log_of(proc)
    assert code == 1, log
    assert "refused it" in log, log
    assert "portal.jup.ag" in log  # the fix
    assert "a-wrong-key" not in log
    rows = env.rows()
    assert rows == [], rows
    assert env.emulator.ledger.issued == {}
    assert env.emulator.ledger.landed() == []
