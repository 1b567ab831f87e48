"""A SIGHUP reload that takes long (here: a slow API answering the network checks of
an added plan; at 100,000 plans, the reading of every plan file) must not stop the
daemon's main loop: it pings systemd's watchdog (`WatchdogSec=60` in the unit: a
loop silent past it is killed with SIGABRT, mid-reload, its runs' clean stop lost)
and writes the heartbeat (`jupcron status` says a daemon whose beat is older than
10 s is not running). The reload keeps its semantics: the same checks, its result
in effect once done, a second SIGHUP during one not lost.

`jupcron run` as a real process, a real sd_notify socket with a short watchdog
interval, the emulator over loopback slowed by its own fault (`slow`)."""

from __future__ import annotations

import signal
from datetime import datetime

from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.fixtures.plans import sol_dca_plan
from tests.fixtures.service import NotifyListener
from tests.support.clifork import ForkedProcess

SOL_UNITS = 10**9  # the emulator prices SOL at 150 USD: 2 SOL pass the 100 USD minimum
SLOW_S = 4  # the API's answer to the added plan's check: under the reload's 5 s bound
PING_USEC = 400_000  # WATCHDOG_USEC: a ping due every 0.2 s


def stored(env: DaemonEnv) -> set[str]:
    return {p["name"] for p in env.status()["plans"]}


def last_beat(env: DaemonEnv) -> datetime | None:
    beats = [d["last_beat"] for d in env.status()["daemons"]]
    return datetime.fromisoformat(beats[0]) if beats else None


def between(lines: list[str], first: str, then: str, what: str) -> int:
    """How many `what` lines came after the last `first` and before the `then` after it."""
    start = len(lines) - 1 - lines[::-1].index(first)
    end = lines.index(then, start)
    return lines[start:end].count(what)


def slow_reload(env: DaemonEnv, notify_socket: NotifyListener, hourly: str = "1h") -> ForkedProcess:
    """A daemon running "hourly", then a SIGHUP whose reload waits `SLOW_S` for the
    API (an added recurring plan's USD value is asked); back once it is reloading."""
    env.write_plans(swap_plan("hourly", {"every": "1h"}))
    env.apply()
    proc = env.start(notify_socket.env(watchdog_usec=PING_USEC))
    assert notify_socket.wait_for("READY=1", timeout=20), env.log_of(proc)
    assert env.wait_until(lambda: last_beat(env) is not None, timeout=10), env.log_of(proc)
    env.emulator.faults.add("slow", count=1, operation="ultra_order", seconds=SLOW_S)
    env.write_plans(swap_plan("hourly", {"every": hourly}), sol_dca_plan("dca", 2 * SOL_UNITS))
    proc.send_signal(signal.SIGHUP)
    assert notify_socket.wait_for("RELOADING=1", timeout=10), env.log_of(proc)
    return proc


def test_a_slow_reload_keeps_the_watchdog_pinged_and_the_heartbeat_written(
    daemon_env: DaemonEnvFactory, notify_socket: NotifyListener
) -> None:
    env = daemon_env()
    proc = slow_reload(env, notify_socket)
    before = last_beat(env)
    assert before is not None
    beats: set[datetime] = set()

    def done() -> bool:
        beat = last_beat(env)
        if beat is not None and beat > before and notify_socket.count("READY=1") < 2:
            beats.add(beat)
        return notify_socket.count("READY=1") >= 2

    assert env.wait_until(done, timeout=30, step=0.1), env.log_of(proc)
    lines = notify_socket.lines()
    pings = between(lines, "RELOADING=1", "READY=1", "WATCHDOG=1")
    # the reload lasted the API's SLOW_S seconds, 20 pings' worth: the loop kept pinging
    assert pings >= 3, (pings, lines[-40:])
    assert beats, "no heartbeat was written while the reload ran"
    # and the reload did what it does: the checked plan applied, the scheduler told
    assert env.wait_until(lambda: "dca" in stored(env), timeout=10), env.log_of(proc)
    assert env.events(proc, "reloaded"), env.log_of(proc)
    assert env.emulator.ledger.requests.get("ultra_order", 0) >= 1
    assert env.stop(proc) == 0


def test_a_sighup_during_a_reload_is_not_lost(
    daemon_env: DaemonEnvFactory, notify_socket: NotifyListener
) -> None:
    """Another SIGHUP while a reload runs (a path unit reloads on every change of the
    folder) reloads again once it is done: a plan file written meanwhile is applied."""
    env = daemon_env()
    proc = slow_reload(env, notify_socket)
    # the first reload waits for the API now; a second file, a second SIGHUP
    env.write_plans(swap_plan("later", {"every": "2h"}), name="later.yaml")
    proc.send_signal(signal.SIGHUP)
    assert env.wait_until(lambda: {"dca", "later"} <= stored(env), timeout=30), env.log_of(proc)
    assert env.wait_until(lambda: len(env.events(proc, "reloaded")) >= 2, timeout=10)
    assert env.stop(proc) == 0


def test_sigterm_during_a_slow_reload_stops_the_daemon_cleanly(
    daemon_env: DaemonEnvFactory, notify_socket: NotifyListener
) -> None:
    """A stop asked while a reload waits for the API stops the daemon (exit 0), the
    plans it was applying not half applied: either all of them, or none."""
    env = daemon_env()
    proc = slow_reload(env, notify_socket, hourly="2h")
    assert env.stop(proc) == 0, env.log_of(proc)
    assert env.events(proc, "daemon_stopped"), env.log_of(proc)
    # the stop came while the API was asked: the reload gave up rather than hold the
    # stop (TimeoutStopSec=45) for a reload's length; the stored plans are as they were
    failed = env.events(proc, "reload_failed")
    assert failed, env.log_of(proc)
    assert "stopping" in failed[0]["error"], failed
    assert not env.events(proc, "reloaded"), env.log_of(proc)
    assert {p["name"] for p in env.status()["plans"]} == {"hourly"}
