"""Secrets, where an operator meets them: `jupcron` as a subprocess against the
emulator. A key file others can read, a key a header cannot carry and plain
http to another machine each end the command with one clear line before
anything is ordered, signed or recorded; URLs with keys, tokens and passwords
work but show nowhere; the files the daemon creates are 0600."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from jupcron.emulator import Emulator
from tests.e2e.cli import jupcron
from tests.e2e.test_cli_settle import events, in_doubt_run
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, at, swap_plan

KEY = "jup_e2eKEY-5b7c"
RPC_KEY = "rpcKEY-e2e-91f"
HOOK_TOKEN = "hookTOKEN-e2e-3a"
DB_PASSWORD = "dbPASS-e2e-6d"


def keyed_env(daemon_env: DaemonEnvFactory, **kw: Any) -> DaemonEnv:
    """A daemon environment whose emulator accepts only requests carrying KEY."""
    env = daemon_env(emulator=Emulator(seed=11, api_key=KEY), **kw)
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    return env


def key_file(env: DaemonEnv, content: bytes, mode: int) -> Path:
    path = env.root / "api-key"
    path.write_bytes(content)
    path.chmod(mode)
    env.write_config(api={"key_file": str(path)})
    return path


def assert_nothing_happened(env: DaemonEnv) -> None:
    assert env.rows() == []  # no run recorded
    assert env.emulator.ledger.requests == {}  # nothing ordered
    assert env.emulator.ledger.landed() == []  # nothing signed or sent


def test_fire_refuses_a_key_file_others_can_read_then_uses_it_once_private(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = keyed_env(daemon_env)
    path = key_file(env, (KEY + "\n").encode(), 0o644)
    done = env.jupcron("fire", "manual")
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {path}: permissions 0644 are too open: the API key file is accessible "
        f"by group or others; run: chmod 600 {path}\n"
    )
    assert done.stdout == ""
    assert_nothing_happened(env)

    path.chmod(0o600)  # the fix the message gives
    done = env.jupcron("fire", "manual")
    assert done.returncode == 0, done.stderr
    assert "succeeded" in done.stdout
    assert len(env.emulator.ledger.landed()) == 1  # the emulator only takes the right key


def test_the_daemon_will_not_start_on_a_key_file_others_can_read(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = keyed_env(daemon_env)
    path = key_file(env, (KEY + "\n").encode(), 0o640)
    proc = env.start()
    assert proc.wait(60) == 1
    log = env.log_of(proc)
    assert f"{path}: permissions 0640 are too open" in log
    assert f"run: chmod 600 {path}" in log
    assert "Traceback" not in log
    assert KEY not in log
    assert_nothing_happened(env)


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("jup_caf\u00e9KEY\n", "a non-ASCII character (character 8)"),
        ("jup_first\njup_second\n", "a line break (character 10)"),
        ("jup\x1b[31mKEY\n", "a control character (character 4)"),
    ],
    ids=["non-ascii", "newline-inside", "escape"],
)
def test_a_key_a_header_cannot_carry_is_one_line_before_any_request(
    daemon_env: DaemonEnvFactory, content: str, kind: str
) -> None:
    env = keyed_env(daemon_env)
    path = key_file(env, content.encode(), 0o600)
    done = env.jupcron("fire", "manual")
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {path}: the API key holds {kind}, which an HTTP header cannot carry; "
        "the key must be one line of visible ASCII\n"
    )
    assert "UnicodeEncodeError" not in done.stderr + done.stdout
    assert_nothing_happened(env)

    env.write_config(api={"key_file": None})
    from_env = jupcron(
        "--config", str(env.config), "fire", "manual", env={"JUPITER_API_KEY": content}
    )
    assert from_env.returncode == 1
    assert from_env.stderr.startswith(f"error: $JUPITER_API_KEY: the API key holds {kind}")
    assert from_env.stderr.count("\n") == 1
    assert_nothing_happened(env)


@pytest.mark.parametrize(
    ("section", "key"),
    [("api", "base_url"), ("rpc", "url"), ("notify", "webhook_url")],
)
def test_plain_http_to_another_machine_stops_every_command(
    daemon_env: DaemonEnvFactory, section: str, key: str
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    env.write_config(**{section: {key: f"http://remote.example.net/p?api-key={RPC_KEY}"}})
    pattern = (
        rf"error: {re.escape(str(env.config))}:\d+:\d+: {section}\.{key}: plain http:// to "
        r"remote\.example\.net, which is not this machine, would send .+ in clear: use "
        rf"https://, or set {section}\.allow_insecure_http: true\n"
    )
    for args in (["fire", "manual"], ["run"], ["plans", "apply"]):
        done = env.jupcron(*args)
        assert done.returncode == 1, (args, done.stderr)
        assert re.fullmatch(pattern, done.stderr), done.stderr
        assert RPC_KEY not in done.stderr
    assert env.rows() == []
    assert env.emulator.ledger.requests == {}


def test_an_explicitly_allowed_plain_http_rpc_url_is_used(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    url = f"http://rpc.example.invalid/?api-key={RPC_KEY}"  # a name that never resolves
    env.write_config(rpc={"url": url, "allow_insecure_http": True})
    done = env.jupcron("fire", "manual")
    # past the config: the run asked that node (to simulate before signing), could
    # not reach it, and so signed nothing
    assert "allow_insecure_http" not in done.stderr
    assert "RPC unreachable" in done.stdout
    assert done.returncode == 1
    assert env.rows()[0]["status"] == "rejected"
    assert env.emulator.ledger.landed() == []
    assert RPC_KEY not in done.stdout + done.stderr


def test_settle_asks_the_rpc_with_its_key_and_shows_the_key_nowhere(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_config(rpc={"url": f"{env.server.url}/rpc?api-key={RPC_KEY}"})
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    run_id = in_doubt_run(env, "a")  # its transaction landed on the emulator's ledger
    done = env.jupcron("--debug", "settle", str(run_id), "--landed", "--reason", "rpc agrees")
    assert done.returncode == 0, done.stderr
    assert env.rows()[0]["status"] == "succeeded"
    step, detail = events(env, run_id)[-1]
    assert step == "settled_by_operator"
    assert "rpc_landed" in str(detail)  # the node was asked, through the real URL
    assert RPC_KEY not in done.stdout + done.stderr + json.dumps(env.rows(), default=str)


class _Hooks(BaseHTTPRequestHandler):
    paths: list[str] = []  # noqa: RUF012 - shared by the handler instances of one server

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        type(self).paths.append(self.path)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def hooks() -> Iterator[ThreadingHTTPServer]:
    _Hooks.paths = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hooks)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def test_the_daemon_uses_every_secret_url_and_logs_none_of_them(
    daemon_env: DaemonEnvFactory, pg_url: str, hooks: ThreadingHTTPServer
) -> None:
    db_url = pg_url.replace("://jupcron@", f"://jupcron:{DB_PASSWORD}@", 1)
    assert DB_PASSWORD in db_url
    env = daemon_env(db_url=db_url)
    env.write_config(
        rpc={"url": f"{env.server.url}/rpc?api-key={RPC_KEY}"},
        notify={"webhook_url": f"http://127.0.0.1:{hooks.server_address[1]}/h/{HOOK_TOKEN}"},
        logging={"level": "debug", "format": "json"},
    )
    env.emulator.faults.add("hostile", operation="ultra_order")
    written = at(0)
    env.write_plans(swap_plan("hostile", {"at": at(3)}))
    env.apply(now=written)
    proc = env.start()
    assert env.wait_until(lambda: _Hooks.paths != [], timeout=30), env.log_of(proc)
    assert env.stop(proc) == 0
    assert _Hooks.paths == [f"/h/{HOOK_TOKEN}"]  # the webhook got its real URL
    assert env.rows()[0]["status"] == "rejected"
    log = env.log_of(proc)
    for secret in (DB_PASSWORD, RPC_KEY, HOOK_TOKEN):
        assert secret not in log
    started = next(json.loads(line) for line in log.splitlines() if "daemon_started" in line)
    assert started["database"].startswith("postgresql+psycopg://jupcron:***@127.0.0.1:")

    upgraded = env.jupcron("db", "upgrade")  # prints the database it upgraded
    assert upgraded.returncode == 0, upgraded.stderr
    assert DB_PASSWORD not in upgraded.stdout + upgraded.stderr
    assert "database postgresql+psycopg://jupcron:***@127.0.0.1:" in upgraded.stdout


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # inherited by the subprocesses: new files would be 0644
    try:
        yield
    finally:
        os.umask(old)


def test_the_database_the_cli_and_daemon_create_is_0600_with_its_wal_shm_and_lock(
    daemon_env: DaemonEnvFactory, umask_022: None
) -> None:
    env = daemon_env()
    db = env.root / "fresh" / "jupcron.db"
    db.parent.mkdir()
    env.write_config(database={"url": f"sqlite:///{db}"})
    upgraded = env.jupcron("db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    env.write_plans(swap_plan("manual", {"every": "1d"}))
    env.apply()
    proc = env.start()
    names = ["jupcron.db", "jupcron.db-wal", "jupcron.db-shm", "jupcron.db.lock"]
    try:
        assert env.wait_until(lambda: "daemon_started" in env.log_of(proc)), env.log_of(proc)
        # the daemon holds its connections open: the -wal and -shm files exist now
        assert env.wait_until(lambda: all((db.parent / n).exists() for n in names), timeout=10)
        modes = {n: stat.S_IMODE((db.parent / n).stat().st_mode) for n in names}
    finally:
        assert env.stop(proc) == 0
    assert modes == dict.fromkeys(names, 0o600)
    plain = db.parent / "made-by-the-umask"
    plain.touch()
    assert stat.S_IMODE(plain.stat().st_mode) == 0o644  # what they would have been
