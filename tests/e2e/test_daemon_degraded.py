"""Issue 28 item 3 as an operator meets it (`jupcron run` as a subprocess): an RPC
node that does not answer leaves the daemon running, degraded, and `jupcron
status` and the status page say so and why; a keypair file open to others stops
the start at once with the fix, before anything is scheduled."""

from __future__ import annotations

import json
from typing import Any

import httpx

from jupcron.cli.run import EXIT_FATAL
from tests.browser.test_status_page import web_url
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan

DEAD_RPC = "http://127.0.0.1:9/rpc"  # nothing listens on the discard port


def status_of(env: DaemonEnv) -> dict[str, Any]:
    done = env.jupcron("status", "--format", "json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_a_silent_rpc_node_is_degraded_in_status_and_on_the_page(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_config(rpc={"url": DEAD_RPC}, web={"listen": "127.0.0.1:0"})
    env.write_plans(swap_plan("hourly", {"every": "1h"}))
    env.apply()
    proc = env.start()
    url = web_url(env, proc)

    def degraded(data: dict[str, Any]) -> str | None:
        daemons = data["daemons"]
        return daemons[0]["degraded"] if daemons else None

    # the wait reads the status in this process; then the CLI's says why
    assert env.wait_until(lambda: degraded(env.status()) is not None), env.log_of(proc)
    why = degraded(status_of(env))
    assert why is not None
    assert why.startswith("rpc: http://127.0.0.1:9/*** did not answer")
    assert why.endswith("(fix: check rpc.url)")
    table = env.jupcron("status").stdout
    assert f"DEGRADED: {why}" in table
    page = httpx.get(url + "/api/status", timeout=10).json()
    assert page["degraded"] == why
    assert page["text"]["degraded"] == why
    html = httpx.get(url + "/", timeout=10).text
    badge = html.index('id="badge-degraded"')
    assert " hidden" not in html[badge : html.index(">", badge)]
    assert proc.poll() is None  # degraded, not dead
    assert env.stop(proc) == 0


def test_a_keypair_open_to_others_stops_the_start_with_the_fix(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_config()
    env.write_plans(swap_plan("hourly", {"every": "1s"}))
    env.apply()
    env.keypair.chmod(0o644)
    proc = env.start()
    code = proc.wait(60)
    log = env.log_of(proc)
    assert code == EXIT_FATAL, log  # a stop only a human can end: systemd does not restart it
    assert f"chmod 600 {env.keypair}" in log
    assert "Traceback" not in log
    assert env.rows() == []
    assert env.emulator.ledger.landed() == []
