"""`jupcron run` as a subprocess: systemd notify and watchdog, metrics, SIGHUP,
and the one-daemon-per-SQLite-file rule."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import httpx

from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, at, swap_plan
from tests.fixtures.service import NotifyListener
from tests.support.pgcluster import free_port


def test_notify_ready_watchdog_and_stopping_with_exit_zero(
    daemon_env: DaemonEnvFactory, notify_socket: NotifyListener
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("hourly", {"every": "1h"}))
    env.apply()
    proc = env.start(notify_socket.env(watchdog_usec=400_000))
    assert notify_socket.wait_for("READY=1", timeout=20), env.log_of(proc)
    assert notify_socket.wait_for("WATCHDOG=1", count=3, timeout=10), notify_socket.lines()
    status = [m["STATUS"] for m in notify_socket.messages() if "STATUS" in m]
    assert any(s.startswith("leader, 1 plans") for s in status), status
    assert env.stop(proc) == 0
    assert notify_socket.wait_for("STOPPING=1", timeout=5)
    lines = notify_socket.lines()
    assert lines.index("READY=1") < lines.index("STOPPING=1")


def test_metrics_count_runs(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    port = free_port()
    env.write_config(metrics={"listen": f"127.0.0.1:{port}"})
    env.write_plans(swap_plan("fast", {"every": "2s"}))
    env.apply()
    proc = env.start()
    assert env.wait_until(lambda: len(env.rows("status = 'succeeded'")) >= 2, timeout=20), (
        env.log_of(proc)
    )
    body = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    match = re.search(r'jupcron_runs_total\{kind="swap",status="succeeded"\} (\d+)', body)
    assert match, body[:2000]
    assert int(float(match.group(1))) >= 2
    latency = re.search(
        r'jupcron_api_latency_seconds_count\{operation="execute_ultra",status="200"\} (\d+)', body
    )
    assert latency, body[:3000]
    assert int(float(latency.group(1))) >= 2
    assert re.search(r"jupcron_leader 1\.0", body)
    assert re.search(r"jupcron_plans 1\.0", body)
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    assert env.stop(proc) == 0


def test_sighup_applies_changed_plans_and_keeps_them_on_a_bad_file(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1h"}))
    env.apply()
    proc = env.start()
    assert env.wait_until(lambda: "became_leader" in env.log_of(proc), timeout=20)
    env.write_plans(swap_plan("a", {"every": "1h"}), swap_plan("b", {"every": "2h"}))
    proc.send_signal(1)  # SIGHUP
    listed = lambda: env.jupcron("plans", "list", "--format", "json").stdout  # noqa: E731
    # the wait reads the store in this process (a CLI process per look costs a second of
    # CPU); then the CLI lists it
    in_store = lambda: {p["name"] for p in env.status()["plans"]}  # noqa: E731
    assert env.wait_until(lambda: "b" in in_store(), timeout=15), env.log_of(proc)
    assert '"b"' in listed()
    (env.plans / "broken.yaml").write_text("name: [oops\n")
    proc.send_signal(1)
    assert env.wait_until(lambda: "reload_failed" in env.log_of(proc), timeout=15)
    assert '"b"' in listed()  # the old plans are kept
    assert env.stop(proc) == 0


def test_second_daemon_on_one_sqlite_file_refuses(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    first = env.start()
    assert env.wait_until(lambda: "became_leader" in env.log_of(first), timeout=20)
    second = env.start()
    assert second.wait(30) == 78
    assert "another jupcron daemon is already using" in env.log_of(second)
    assert "Traceback" not in env.log_of(second)
    assert first.poll() is None
    assert env.stop(first) == 0


def test_unmigrated_database_is_refused_with_one_line(
    daemon_env: DaemonEnvFactory, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    env = daemon_env()
    env.write_config(database={"url": f"sqlite:///{tmp_path / 'new.db'}"})
    done = env.jupcron("run", timeout=30)
    assert done.returncode == 78  # EXIT_FATAL: systemd does not restart it
    assert "jupcron db upgrade" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unreachable_database_at_start_is_waited_for_and_sigterm_ends_the_wait(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    # nothing listens there: as at boot, before PostgreSQL is up
    env.write_config(database={"url": f"postgresql+psycopg://jupcron@127.0.0.1:{free_port()}/x"})
    proc = env.start()
    assert env.wait_until(lambda: "store_unavailable_at_start" in env.log_of(proc), timeout=30)
    assert env.wait_until(lambda: env.log_of(proc).count("store_unavailable_at_start") >= 2)
    assert proc.poll() is None  # still waiting, not exited
    assert env.stop(proc) == 0
    assert "Traceback" not in env.log_of(proc)


class _Hooks(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.received.append(json.loads(self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def test_rejected_runs_and_misfires_reach_the_webhook(daemon_env: DaemonEnvFactory) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Hooks)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = daemon_env()
        env.write_config(notify={"webhook_url": f"http://127.0.0.1:{server.server_port}/hook"})
        env.emulator.faults.add("hostile", operation="ultra_order")
        written = at(0)
        env.write_plans(
            swap_plan("hostile", {"at": at(2)}),
            swap_plan("missed", {"every": "2s", "misfire": "skip"}),
        )
        env.apply(now=written)
        time.sleep(5)  # the daemon is down across a few of "missed"'s slots
        proc = env.start()
        events = lambda: {m.get("event") for m in _Hooks.received}  # noqa: E731
        assert env.wait_until(lambda: {"run_rejected", "misfire"} <= events(), timeout=30), (
            _Hooks.received,
            env.log_of(proc),
        )
        rejected = next(m for m in _Hooks.received if m.get("event") == "run_rejected")
        assert rejected["plan"] == "hostile"
        assert "signed" not in json.dumps(rejected).lower() or "signature" in json.dumps(rejected)
        assert env.stop(proc) == 0
    finally:
        server.shutdown()
        server.server_close()


def test_sigterm_lets_an_in_flight_run_finish_then_exits_zero(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.emulator.faults.add("slow", operation="execute_ultra", seconds=3)
    written = at(0)
    env.write_plans(swap_plan("once", {"at": at(2)}))
    env.apply(now=written)
    proc = env.start()
    assert env.wait_until(
        lambda: bool(env.rows()) and env.rows()[0]["status"] == "submitted", timeout=30
    )
    proc.send_signal(15)  # SIGTERM while execute is in flight
    assert proc.wait(30) == 0, env.log_of(proc)
    assert env.rows()[0]["status"] == "succeeded"
    assert len(env.emulator.ledger.landed()) == 1
    log = env.log_of(proc)
    assert log.index("daemon_stopping") < log.index("run_finished")


def test_second_daemon_with_metrics_names_the_lock_holder_not_the_port(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_config(metrics={"listen": f"127.0.0.1:{free_port()}"})
    first = env.start()
    assert env.wait_until(lambda: "became_leader" in env.log_of(first), timeout=20)
    second = env.start()  # same config: same SQLite file, same metrics port
    assert second.wait(30) == 78
    log = env.log_of(second)
    assert f"another jupcron daemon is already using {env.db_url.removeprefix('sqlite:///')} " \
           f"(held by pid {first.pid})" in log, log  # fmt: skip
    assert "cannot listen" not in log
    assert "Traceback" not in log
    assert first.poll() is None
    assert env.stop(first) == 0


def test_a_failed_start_logs_no_stop_events(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.keypair.unlink()  # the start fails on the keypair, after the store was opened
    proc = env.start()
    assert proc.wait(30) == 78
    log = env.log_of(proc)
    assert "jupcron wallet new" in log, log
    for event in ("daemon_started", "daemon_stopping", "daemon_stopped"):
        assert event not in log, log


def _revision(env: DaemonEnv) -> int:
    engine = make_engine(env.db_url)
    try:
        with transaction(session_factory(engine)) as session:
            return store_plans.revision(session)
    finally:
        engine.dispose()


def test_a_start_and_a_reload_without_plan_changes_reload_nothing(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1h"}), swap_plan("b", {"every": "2h"}))
    env.apply()
    revision = _revision(env)
    proc = env.start()
    assert env.wait_until(lambda: "scheduler_started" in env.log_of(proc), timeout=20)
    proc.send_signal(1)  # SIGHUP: plans.dir again, unchanged
    assert env.wait_until(lambda: '"reloaded"' in env.log_of(proc), timeout=15), env.log_of(proc)
    again = env.jupcron("plans", "apply")  # the same files by hand: nothing to do
    assert again.returncode == 0, again.stderr
    assert f"(plans revision {revision})" in again.stdout
    time.sleep(3)  # a few of the scheduler's revision polls
    assert env.stop(proc) == 0
    log = env.log_of(proc)
    assert "plans_reloaded" not in log, log
    started = [json.loads(line) for line in log.splitlines() if "scheduler_started" in line]
    assert [e["plans"] for e in started] == [2]
    assert _revision(env) == revision
