"""A daemon that starts without the keypair of a wallet its plans name (the config
dropped it since `plans apply`) signs nothing for those plans: each of their runs is
rejected. The start is where that can be said before the money is missed: the start
alert names the wallets (a weekly plan's first rejected run is days away). Before, the
start found them (``plans_wallet_unknown`` in the log only) and the start alert said
nothing of it. The real daemon (a subprocess), Apprise's json:// to a local receiver."""

from __future__ import annotations

from jupcron.chain.wallet import write_keypair_file
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan
from tests.fixtures.receivers import HttpReceiver, wait_for


def test_the_start_alert_names_a_wallet_plans_need_that_is_not_loaded(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    env = daemon_env()
    notify = {"urls": [http_receiver.url], "batch": 0, "min_interval": 0}
    savings = env.root / "savings.json"
    write_keypair_file(savings)
    env.write_config(notify=notify, wallets={"savings": {"keypair": str(savings)}})
    env.write_plans({**swap_plan("weekly", {"every": "1w"}), "wallet": "savings"},
                    swap_plan("daily", {"every": "1d"}))  # fmt: skip
    env.apply()
    env.write_config(notify=notify)  # the savings wallet dropped from the config
    proc = env.start()
    try:
        started = lambda: [b for b in http_receiver.bodies if "[daemon_start]" in b["message"]]  # noqa: E731
        assert wait_for(started, timeout=30), env.log_of(proc)
    finally:
        assert env.stop(proc) == 0
    assert env.events(proc, "plans_wallet_unknown")  # the log said it
    (body,) = started()
    assert "savings" in body["message"], f"the start alert says nothing of it: {body['message']}"
