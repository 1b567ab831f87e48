"""The status page of a running daemon (`jupcron run` as a subprocess): nothing
secret on the page or in its JSON, and a bad ``web.*`` stops the start with one
line."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx
import pytest

from tests.browser.test_status_page import web_url
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan

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
    assert done.returncode == 1
    assert problem in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert WEB_TOKEN not in done.stderr + done.stdout
