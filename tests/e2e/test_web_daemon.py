"""The status page of a running daemon (`jupcron run` as a subprocess): nothing
secret on the page or in its JSON; a bad ``web.*`` stops the start with one
line; dry run and the kill switch as the daemon has them after it re-read its
config file; a standby peer on the pages of a PostgreSQL pair; and the twins
agreeing with `jupcron status --format json` on the same daemons."""

from __future__ import annotations

import base64
import json
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.test_status_page import web_url
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.support.agree import agreeing

API_KEY = "apikey-SECRET-6f1d2c"
WEB_TOKEN = "webtoken-SECRET-0123456789"
HOOK_TOKEN = "hooktoken-SECRET-77"
RPC_KEY = "rpckey-SECRET-42"


def private(path: Path, text: str) -> Path:
    path.write_text(text + "\n")
    path.chmod(0o600)
    return path


@pytest.mark.slow
def test_no_secret_on_the_page_or_in_its_json(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    key = private(env.root / "api-key", API_KEY)
    token = private(env.root / "web-token", WEB_TOKEN)
    env.write_config(
        api={"key_file": str(key)},
        web={"listen": "127.0.0.1:0", "token_file": str(token)},
        notify={"webhook_url": f"http://127.0.0.1:9/hook?token={HOOK_TOKEN}"},
        rpc={"url": f"http://127.0.0.1:9/?api-key={RPC_KEY}"},
    )  # fmt: skip
    env.write_plans(swap_plan("hourly", {"every": "1h", "misfire": "skip"}))
    env.apply()
    proc = env.start()
    url = web_url(env, proc)
    keypair = json.loads(env.keypair.read_text())
    secret_key = bytes(keypair)
    needles = [API_KEY, WEB_TOKEN, HOOK_TOKEN, RPC_KEY, json.dumps(keypair[:8])[1:-1],
               secret_key.hex(), base64.b64encode(secret_key).decode()]  # fmt: skip
    auth = {"Authorization": f"Bearer {WEB_TOKEN}"}
    seen = []
    for path in ("/", "/api/status", "/api/plans", "/api/runs", "/metrics", "/static/app.js"):
        answer = httpx.get(url + path, headers=auth, timeout=10)
        assert answer.status_code == 200, path
        seen.append(answer.text + json.dumps(dict(answer.headers)))
    login = httpx.post(url + "/login", data={"token": WEB_TOKEN}, timeout=10)
    seen.append(login.text + json.dumps(dict(login.headers)))
    assert httpx.get(url + "/api/status", timeout=10).status_code == 401
    everything = "\n".join(seen)
    for needle in needles:
        assert needle not in everything
    assert "hourly" in everything
    assert env.wallet.address in everything  # the public key is no secret
    assert env.stop(proc) == 0
    for needle in needles:
        assert needle not in env.log_of(proc)


@pytest.mark.parametrize(("web", "mode", "problem"), [
    ({"listen": "0.0.0.0:0"}, None,
     "web.listen '0.0.0.0:0' is not a loopback address: set web.token_file too"),
    ({"listen": "127.0.0.1:0", "token_file": "web-token"}, 0o644, "permissions 0644 are too open"),
    ({"listen": "127.0.0.1:0", "token_file": "missing"}, None, "web token file not found"),
    ({"listen": "nowhere"}, None, "web.listen 'nowhere': expected HOST:PORT"),
])  # fmt: skip
def test_a_bad_web_setting_stops_the_start_with_one_line(
    daemon_env: DaemonEnvFactory, web: dict[str, str], mode: int | None, problem: str
) -> None:
    env = daemon_env()
    if mode is not None:
        (env.root / "web-token").write_text(WEB_TOKEN)
        (env.root / "web-token").chmod(mode)
    if "token_file" in web:
        web = {**web, "token_file": str(env.root / web["token_file"])}
    env.write_config(web=web)
    done = env.jupcron("run", timeout=30)
    assert done.returncode == 78
    assert problem in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert WEB_TOKEN not in done.stderr + done.stdout


def _status(env: DaemonEnv) -> dict[str, Any]:
    done = env.jupcron("status", "--format", "json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _agree(url: str, env: DaemonEnv) -> None:
    """The page's twins and `jupcron status --format json` on the same daemon."""
    cli = _status(env)
    web = httpx.get(url + "/api/status", timeout=10).json()
    plans = httpx.get(url + "/api/plans", timeout=10).json()["plans"]
    for key in ("now", "config"):
        del cli[key]
    for node in cli["daemons"]:  # the beat may be renewed between the two reads
        del node["last_beat"]
    agreeing(plans, cli.pop("plans"), "plans")
    agreeing(web, cli, "status")


@pytest.mark.slow
def test_the_page_shows_dry_run_and_the_kill_switch_as_the_daemon_has_them_now(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    switch = env.root / "STOP"
    web = {"listen": "127.0.0.1:0", "refresh": 1}
    env.write_config(web=web, safety={"kill_switch_file": str(switch)})
    env.write_plans(swap_plan("hourly", {"every": "1h", "misfire": "skip"}))
    env.apply()
    proc = env.start()
    url = web_url(env, proc)

    def status() -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(url + "/api/status", timeout=10).json()
        return data

    assert env.wait_until(lambda: status()["running"], timeout=30), env.log_of(proc)
    data = status()
    assert data["role"] == "leader"
    assert data["node"].endswith(f":{proc.pid}")
    assert (data["dry_run"], data["kill_switch"]) == (False, None)
    # the runway check reports on its own thread after the start: once it has, the two
    # reads of `_agree` see the same state (between them it was a race)
    assert env.wait_until(lambda: bool(status()["runway"]), timeout=30), env.log_of(proc)
    _agree(url, env)
    # the daemon follows its config file: no restart, no SIGHUP
    env.write_config(web=web, safety={"kill_switch_file": str(switch), "dry_run": True})
    assert env.wait_until(lambda: status()["dry_run"] is True, timeout=30), env.log_of(proc)
    switch.write_text("")
    stop = f"kill switch file {switch} exists"
    assert env.wait_until(lambda: status()["kill_switch"] == stop, timeout=30)
    data = status()
    assert (data["daemons"][0]["dry_run"], data["daemons"][0]["kill_switch"]) == (True, stop)
    assert data["text"]["kill_switch"] == f"ON: {stop}"
    _agree(url, env)
    assert env.stop(proc) == 0


@pytest.mark.slow
def test_a_standby_peer_shows_on_the_pages_of_a_postgresql_pair(
    daemon_env: DaemonEnvFactory, pg_url: str
) -> None:
    env = daemon_env(db_url=pg_url)
    env.write_config(web={"listen": "127.0.0.1:0"})
    env.write_plans(swap_plan("hourly", {"every": "1h", "misfire": "skip"}))
    env.apply()
    first = env.start()
    assert env.wait_until(lambda: "became_leader" in env.log_of(first), timeout=30)
    second = env.start()
    leader_url, standby_url = web_url(env, first), web_url(env, second)

    def nodes(url: str) -> list[tuple[str, str, bool, bool]]:
        data = httpx.get(url + "/api/status", timeout=10).json()
        return [(d["node"].rsplit(":", 1)[1], d["role"], d["running"], d["this"])
                for d in data["daemons"]]  # fmt: skip

    pair = [(str(first.pid), "leader", True), (str(second.pid), "standby", True)]
    assert env.wait_until(lambda: [n[:3] for n in nodes(standby_url)] == pair, timeout=30)
    assert [n[3] for n in nodes(standby_url)] == [False, True]
    assert [n[3] for n in nodes(leader_url)] == [True, False]
    standby = httpx.get(standby_url + "/api/status", timeout=10).json()
    assert standby["role"] == "standby"
    assert standby["leader"].endswith(f":{first.pid}")
    page = httpx.get(standby_url + "/", timeout=10).text
    assert f':{second.pid}" data-role="standby" data-this="yes"' in page
    assert f':{first.pid}" data-role="leader"' in page
    _agree(standby_url, env)
    assert env.stop(second) == 0
    assert env.stop(first) == 0


@pytest.mark.slow
def test_a_new_token_and_a_reload_end_the_old_token_and_sessions(
    daemon_env: DaemonEnvFactory,
) -> None:
    """Issue 28 item 8 through the daemon's own reload: a token on a network address
    over plain http is warned of at start; after the token file is rewritten and the
    daemon gets SIGHUP, the old token and the browser's session are refused, the new
    token works; no restart, and no token in the log."""
    env = daemon_env()
    token = private(env.root / "web-token", WEB_TOKEN)
    env.write_config(web={"listen": "0.0.0.0:0", "token_file": str(token)})
    env.write_plans(swap_plan("hourly", {"every": "1h"}))
    env.apply()
    proc = env.start()
    url = web_url(env, proc)
    assert '"web_plain_http"' in env.log_of(proc)
    new_token = "webtoken-NEW-SECRET-9876543210"
    with httpx.Client(base_url=url, timeout=10) as browser:
        assert browser.post("/login", data={"token": WEB_TOKEN}).status_code == 303
        assert browser.get("/api/status").status_code == 200
        fresh = private(env.root / "web-token.new", new_token)
        fresh.replace(token)
        proc.send_signal(signal.SIGHUP)
        assert env.wait_until(lambda: browser.get("/api/status").status_code == 401)
    old = {"Authorization": f"Bearer {WEB_TOKEN}"}
    new = {"Authorization": f"Bearer {new_token}"}
    assert httpx.get(url + "/api/status", headers=old, timeout=10).status_code == 401
    assert httpx.get(url + "/api/status", headers=new, timeout=10).status_code == 200
    assert proc.poll() is None
    assert env.stop(proc) == 0
    log = env.log_of(proc)
    assert '"web_token_changed"' in log
    assert WEB_TOKEN not in log
    assert new_token not in log
