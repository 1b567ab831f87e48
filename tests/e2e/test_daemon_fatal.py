"""A refused API key is fatal (DESIGN: needs a human): the daemon stops by itself
with exit 1 instead of recording a failed run, and the run stays where its row
says (nothing ordered, nothing signed) for recovery once the key is fixed."""

from __future__ import annotations

from daemon.emulator import Emulator
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
    assert '"daemon_fatal"' in log or "daemon_fatal" in log, log
    rows = env.rows()
    assert [r["status"] for r in rows] == ["pending"], rows
    assert env.emulator.ledger.issued == {}
    assert env.emulator.ledger.landed() == []
