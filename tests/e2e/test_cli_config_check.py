"""`jupcron config check` (DESIGN §3, third round): validates config and plans and
probes the API key, the RPC node and the wallet; exit 0 all good, 1 otherwise."""

from __future__ import annotations

import json

from jupcron.emulator import Emulator
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan
from tests.fixtures.receivers import HttpReceiver


def test_all_good_against_the_emulator(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    env.write_config(rpc={"url": env.server.url + "/rpc"}, notify={"urls": [http_receiver.url]})
    env.write_plans(swap_plan("a", {"every": "1d"}))
    done = env.jupcron("config", "check", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    verdicts = {c["check"]: c["verdict"] for c in report["checks"]}
    assert report["ok"] is True
    assert verdicts["api key"] == "ok"
    assert verdicts["wallet"] == "ok"
    assert verdicts["database"] == "ok"
    assert verdicts["plans"] == "ok"
    assert verdicts["notify"] == "ok"
    assert verdicts["rpc"] in ("ok", "warn")  # warn: the emulator's wallet may hold no SOL
    assert http_receiver.url.split("//")[1] not in done.stdout  # the URL is a secret
    assert "json://…" in [c["detail"] for c in report["checks"]]


def test_each_failure_is_named_with_its_fix(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env(emulator=Emulator(seed=2, api_key="the-right-key"))
    env.write_config(notify={"urls": ["bogus://token@host"]})
    env.write_plans({"name": "broken", "kind": "swap"})
    (env.root / "keypair.json").write_text("[1, 2]")
    done = env.jupcron("config", "check")
    assert done.returncode == 1, done.stdout
    lines = {line.split()[1]: line for line in done.stdout.splitlines() if line[:4].strip()}
    assert lines["wallet"].startswith("fail")
    assert lines["plans"].startswith("fail")
    assert lines["notify"].startswith("fail")
    assert "token" not in lines["notify"]
    assert "check(s) failed" in done.stdout
    assert "Traceback" not in done.stderr
    keyed = env.jupcron("config", "check")  # no key for an emulator that wants one
    assert "fail  api key" in keyed.stdout
    assert "portal.jup.ag" in keyed.stdout


def test_a_config_that_does_not_load_is_exit_one(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_config(guard={"nope": 1})
    done = env.jupcron("config", "check")
    assert done.returncode == 1
    assert done.stderr.startswith("error:") or "nope" in done.stderr


def test_a_cap_on_a_symbol_fails_with_the_mint_meant(daemon_env: DaemonEnvFactory) -> None:
    """Before: ``mint: USDC`` loaded and `config check` said all good, yet the cap never
    applied (caps match a run's input mint address exactly)."""
    env = daemon_env()
    env.write_config(safety={"caps": [{"mint": "USDC", "per_day": 5_000_000}]})
    done = env.jupcron("config", "check")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "all good" not in done.stdout
    expected = (
        "safety.caps.0.mint: 'USDC' is a symbol, not a mint address (did you mean USDC's "
        "mint 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'?)"
    )
    assert expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_page_token_over_plain_http_is_warned_of(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    token = env.root / "web-token"
    token.write_text("webtoken-SECRET-0123456789\n")
    token.chmod(0o600)
    env.write_config(web={"listen": "0.0.0.0:8080", "token_file": str(token)})
    env.write_plans(swap_plan("a", {"every": "1d"}))
    done = env.jupcron("config", "check", "--format", "json")
    checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["web"]["verdict"] == "warn"
    assert "plain http" in checks["web"]["detail"]
    assert "web.secure_cookie: true" in checks["web"]["fix"]
    assert "webtoken-SECRET" not in done.stdout
    env.write_config(
        web={"listen": "0.0.0.0:8080", "token_file": str(token), "secure_cookie": True}
    )  # a TLS proxy in front, declared
    behind = json.loads(env.jupcron("config", "check", "--format", "json").stdout)
    assert {c["check"]: c["verdict"] for c in behind["checks"]}["web"] == "ok"
    token.chmod(0o644)
    opened = json.loads(env.jupcron("config", "check", "--format", "json").stdout)
    web = {c["check"]: c for c in opened["checks"]}["web"]
    assert web["verdict"] == "fail"
    assert "too open" in web["detail"]


def test_a_kill_switch_file_another_user_may_delete_is_warned_of(
    daemon_env: DaemonEnvFactory,
) -> None:
    """Deleting the kill switch file lets runs be ordered again: a folder others may
    write (no sticky bit) lets any local user do it."""
    env = daemon_env()
    shared = env.root / "switches"
    shared.mkdir()
    shared.chmod(0o777)
    env.write_config(safety={"kill_switch_file": str(shared / "STOP")})
    env.write_plans(swap_plan("a", {"every": "1d"}))
    done = env.jupcron("config", "check", "--format", "json")
    checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["kill switch"]["verdict"] == "warn", done.stdout
    assert "another user may delete the kill switch file" in checks["kill switch"]["detail"]
    assert f"chmod go-w {shared}" in checks["kill switch"]["fix"]
    shared.chmod(0o1777)  # sticky, as /tmp: only the file's owner may delete it
    again = json.loads(env.jupcron("config", "check", "--format", "json").stdout)
    assert "kill switch" not in {c["check"] for c in again["checks"]}
