"""Issue 14, items 3 and 4, as an operator meets them: `jupcron pause`, `jupcron
resume` and `jupcron status` as subprocesses beside a running daemon (`jupcron
run`, a subprocess too) on SQLite; paused slots in `jupcron audit` as skipped with
the reason; nothing written for an unknown plan; status that never creates a file."""

from __future__ import annotations

import json
import signal
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.e2e.cli import jupcron
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.support.clifork import ForkedProcess


def status_of(env: DaemonEnv) -> dict[str, Any]:
    done = env.jupcron("status", "--format", "json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def audit_of(env: DaemonEnv, *args: str) -> list[dict[str, Any]]:
    done = env.jupcron("audit", "--format", "json", "--limit", "1000", *args)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def rows_of(env: DaemonEnv, plan: str | None = None) -> list[dict[str, Any]]:
    """The audit view's rows, read in this process: what the waits poll (a CLI process
    per look would cost a second of CPU each); the CLI's own output is checked once."""
    return env.rows("1=1" if plan is None else f"plan_name = '{plan}'")


def plan_of(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in data["plans"] if p["name"] == name)


def newer(rows: list[dict[str, Any]], than: int) -> list[dict[str, Any]]:
    return [r for r in rows if r["run_id"] > than]


def last_id(env: DaemonEnv) -> int:
    return max((r["run_id"] for r in env.rows()), default=0)


@pytest.mark.timeout(240)  # a dozen CLI processes and a daemon's ticks: slow on a loaded machine
def test_pause_and_resume_reach_a_running_daemon(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    switch = env.root / "STOP"
    env.write_config(safety={"kill_switch_file": str(switch)})
    env.write_plans(swap_plan("tick", {"every": "1s", "grace": 30}),
                    swap_plan("tock", {"every": "1s", "grace": 30}))  # fmt: skip
    env.apply()
    proc = env.start()
    assert env.wait_until(lambda: env.status()["running"], timeout=30), env.log_of(proc)
    data = status_of(env)
    assert data["running"] is True
    assert data["leader"].endswith(f":{proc.pid}")
    assert [(d["role"], d["running"]) for d in data["daemons"]] == [("leader", True)]
    assert (data["dry_run"], data["kill_switch"], data["pauses"]) == (False, None, [])
    assert plan_of(data, "tick")["next_fire"] is not None
    assert env.wait_until(lambda: any(r["status"] == "succeeded" for r in rows_of(env, "tick")))
    # (a run every second: the latest may be a newer one still under way)
    assert env.wait_until(lambda: plan_of(status_of(env), "tick")["last_status"] == "succeeded")

    # pause one plan: its slots are recorded as skipped, with the reason; the other runs on
    done = env.jupcron("pause", "tick", "--reason", "bad price feed", "--by", "ann")
    assert done.returncode == 0, done.stderr
    assert "paused tick: bad price feed" in done.stdout
    assert f"1 daemon(s) running on this database ({data['leader']})" in done.stdout
    mark = last_id(env)
    reason = "paused: bad price feed (by ann; jupcron resume tick)"
    skipped = lambda: [r for r in newer(rows_of(env, "tick"), mark)  # noqa: E731
                       if r["status"] == "skipped" and r["error"] == reason]  # fmt: skip
    assert env.wait_until(lambda: len(skipped()) >= 2, timeout=30), env.log_of(proc)
    # the table too, as an operator reads it
    table = env.jupcron("audit", "--plan", "tick", "--status", "skipped").stdout
    assert "paused: bad price feed" in table
    data = status_of(env)
    assert plan_of(data, "tick")["paused"] == reason
    assert plan_of(data, "tock")["paused"] is None
    assert [(p["plan"], p["reason"], p["by"]) for p in data["pauses"]] == [
        ("tick", "bad price feed", "ann")
    ]
    assert env.wait_until(lambda: any(
        r["status"] == "succeeded" for r in newer(rows_of(env, "tock"), mark)))  # fmt: skip
    shown = env.jupcron("status").stdout
    assert "leader since" in shown
    assert "by ann: bad price feed (jupcron resume tick)" in shown
    # after the skips began, no tick slot was ordered
    paused_since = min(r["run_id"] for r in skipped())
    assert all(r["status"] == "skipped" for r in newer(audit_of(env, "--plan", "tick"),
                                                        paused_since))  # fmt: skip
    # a manual fire of a paused plan is refused, nothing recorded
    before = len(env.rows())
    done = env.jupcron("fire", "tick")
    assert done.returncode == 1
    assert done.stderr.startswith("error: plan 'tick' is not fired: paused: bad price feed")
    assert "Traceback" not in done.stderr

    # resume: it runs again; resuming again says so
    done = env.jupcron("resume", "tick")
    assert done.returncode == 0, done.stderr
    assert "resumed tick (paused by ann at" in done.stdout
    mark = last_id(env)
    assert env.wait_until(lambda: any(
        r["status"] == "succeeded" for r in newer(rows_of(env, "tick"), mark)))  # fmt: skip
    done = env.jupcron("resume", "tick")
    assert (done.returncode, done.stdout.strip()) == (0, "tick: not paused")
    assert len(env.rows()) > before

    # a name that is not a plan: one line, exit 1, nothing written (not even the good name)
    done = env.jupcron("pause", "tick", "no-such-plan", "--reason", "typo")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "error: no plan named 'no-such-plan' in the store (see 'jupcron plans list'); "
        "nothing changed"
    )
    assert status_of(env)["pauses"] == []
    assert env.jupcron("resume", "no-such-plan").returncode == 1
    assert env.jupcron("pause").returncode == 2  # neither names nor --all: usage

    # pause --all, with a plan paused by name too: resume --all lifts only the first
    assert env.jupcron("pause", "tock", "--reason", "own").returncode == 0
    done = env.jupcron("pause", "--all", "--reason", "incident 7")
    assert done.returncode == 0, done.stderr
    assert "undo with: jupcron resume --all" in done.stdout
    mark = last_id(env)

    def every() -> set[str]:
        prefix = "all plans paused: incident 7"
        rows = newer(rows_of(env), mark)
        return {r["plan_name"] for r in rows if (r["error"] or "").startswith(prefix)}

    assert env.wait_until(lambda: every() == {"tick"}, timeout=30)  # tock: its own pause
    done = env.jupcron("resume", "--all")
    assert "resumed all plans" in done.stdout
    assert "still paused: tock (by " in done.stdout
    assert "jupcron resume tock" in done.stdout
    assert env.jupcron("resume", "tock").returncode == 0

    # the kill switch and dry run as the daemon has them now (its config re-read on SIGHUP)
    switch.write_text("")
    env.write_config(safety={"kill_switch_file": str(switch), "dry_run": True})
    proc.send_signal(signal.SIGHUP)
    assert env.wait_until(lambda: env.status()["dry_run"] is True, timeout=30)
    data = status_of(env)
    assert data["dry_run"] is True
    assert data["kill_switch"] == f"kill switch file {switch} exists"
    assert data["daemons"][0]["dry_run"] is True
    shown = env.jupcron("status").stdout
    assert f"kill switch file {switch} exists" in shown

    # a clean stop removes the daemon's row: nothing running
    assert env.stop(proc) == 0
    data = status_of(env)
    assert (data["running"], data["daemons"], data["dry_run"]) == (False, [], None)
    assert data["config"]["kill_switch"] == f"kill switch file {switch} exists"
    assert "none running" in env.jupcron("status").stdout


def test_status_shows_runs_in_flight_and_in_doubt_with_the_settle_command(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("weekly", {"cron": "0 9 * * MON"}))
    env.apply()
    assert env.jupcron("fire", "weekly").returncode == 0
    engine = make_engine(env.db_url)
    try:
        with engine.begin() as conn:
            ids = [r for (r,) in conn.execute(text("SELECT id FROM runs ORDER BY id"))]
            # a crash left one in doubt (the runner's own path is tests/e2e/test_crash.py)
            conn.execute(text("UPDATE runs SET status = 'in_doubt' WHERE id = :i"), {"i": ids[0]})
    finally:
        engine.dispose()
    data = status_of(env)
    assert data["running"] is False
    assert data["in_doubt_count"] == 1
    doubt = data["in_doubt"][0]
    assert doubt["run_id"] == ids[0]
    assert doubt["settle"] == f"jupcron settle {ids[0]} --landed|--not-landed --reason TEXT"
    assert doubt["signature"]
    weekly = plan_of(data, "weekly")
    assert weekly["next_fire"].endswith("09:00:00Z")
    shown = env.jupcron("status").stdout
    assert "in doubt (1)" in shown
    assert "jupcron settle RUN_ID --landed|--not-landed --reason TEXT" in shown
    assert "in flight (0)" in shown


def test_status_never_creates_a_database_file(tmp_path: Path) -> None:
    config = tmp_path / "jupcron.yaml"
    config.write_text("database:\n  url: sqlite:///nothing-here.db\n")
    done = jupcron("--config", str(config), "status")
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: no database at {tmp_path / 'nothing-here.db'}")
    assert not (tmp_path / "nothing-here.db").exists()
    assert list(tmp_path.iterdir()) == [config]


def test_status_writes_no_database_into_an_empty_file(tmp_path: Path) -> None:
    """An empty file where the database should be is none yet: a read-only command says
    so and leaves it empty (it used to write a 4 KB database into it)."""
    config = tmp_path / "jupcron.yaml"
    config.write_text("database:\n  url: sqlite:///empty.db\n")
    (tmp_path / "empty.db").touch()
    done = jupcron("--config", str(config), "status")
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: no database at {tmp_path / 'empty.db'} (an empty file)")
    assert (tmp_path / "empty.db").stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db", "jupcron.yaml"]


def _runs(url: str) -> list[dict[str, Any]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT id, status, error, claimed_by, created_at FROM runs ORDER BY id"))  # fmt: skip
            return [dict(r._mapping) for r in rows]
    finally:
        engine.dispose()


def test_a_pause_reaches_every_daemon_of_a_postgresql_pair(
    daemon_env: DaemonEnvFactory, pg_url: str
) -> None:
    env = daemon_env(db_url=pg_url)
    env.write_plans(swap_plan("tick", {"every": "1s", "grace": 30}))
    env.apply()
    first = env.start()
    assert env.wait_until(lambda: "became_leader" in env.log_of(first), timeout=30)
    second = env.start()
    # the waits read the status in this process; the CLI's says the same after each
    nodes = lambda data: [(d["node"].rsplit(":", 1)[1], d["role"], d["running"])  # noqa: E731
                          for d in data["daemons"]]  # fmt: skip
    both = [(str(first.pid), "leader", True), (str(second.pid), "standby", True)]
    assert env.wait_until(lambda: nodes(env.status()) == both, timeout=30), env.log_of(second)
    assert nodes(status_of(env)) == both
    shown = env.jupcron("status").stdout
    assert f":{second.pid}  standby since" in shown

    done = env.jupcron("pause", "--all", "--reason", "incident 9")
    assert done.returncode == 0, done.stderr
    reason = "all plans paused: incident 9 ("

    # the leader obeys ...
    def by(proc: ForkedProcess) -> list[dict[str, Any]]:
        return [r for r in _runs(pg_url) if (r["claimed_by"] or "").endswith(f":{proc.pid}")]

    def skipped_by(proc: ForkedProcess) -> list[dict[str, Any]]:
        return [r for r in by(proc) if r["status"] == "skipped" and r["error"].startswith(reason)]

    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            paused_at = conn.execute(text("SELECT paused_at FROM pauses")).scalar_one()
    finally:
        engine.dispose()

    def claimed_after(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Runs claimed a second or more after the pause (the database's times)."""
        return [r for r in runs if r["created_at"] >= paused_at + timedelta(seconds=1)]

    # (a run claimed after the second that follows the pause: on a busy machine the
    # first two it skips can both fall inside that second)
    assert env.wait_until(
        lambda: len(skipped_by(first)) >= 2 and claimed_after(skipped_by(first)), timeout=30
    ), env.log_of(first)
    # ... and so does the standby, once it leads: kill the leader
    first.kill()
    first.wait(10)
    assert env.wait_until(lambda: len(skipped_by(second)) >= 2, timeout=60), env.log_of(second)
    led = (str(second.pid), "leader", True)
    assert env.wait_until(lambda: nodes(env.status())[0] == led, timeout=30)
    listed = nodes(status_of(env))
    assert listed[0] == led
    assert (str(first.pid), "standby", True) not in listed  # the killed one: stale, or gone
    # what was stored agrees: every run claimed a second after the pause (by either
    # daemon) was skipped for it (the times are the database's, not the test's)
    after = claimed_after([r for r in _runs(pg_url) if r["claimed_by"]])
    assert {r["claimed_by"].rsplit(":", 1)[1] for r in after} == {str(first.pid), str(second.pid)}
    others = [r for r in after if r["status"] != "skipped" or not r["error"].startswith(reason)]
    assert not others, others

    assert env.jupcron("resume", "--all").returncode == 0
    mark = max(r["id"] for r in _runs(pg_url))
    assert env.wait_until(lambda: any(r["status"] == "succeeded" and r["id"] > mark
                                      for r in by(second)), timeout=30)  # fmt: skip
    assert env.stop(second) == 0


def test_the_emergency_stop_needs_only_the_database(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    # a typo elsewhere in the config, a keypair gone: pause and resume still work
    env.write_config(guard={"max_slippage_bp": 10}, wallet={"keypair": "/nonexistent.json"})
    assert env.jupcron("status").returncode == 1  # the whole config does not load

    done = env.jupcron("pause", "--all", "--reason", "incident 12", "--by", "ann")
    assert done.returncode == 0, done.stderr
    assert "warning: the config does not load" in done.stderr
    assert "max_slippage_bp" in done.stderr
    assert "paused all plans: incident 12" in done.stdout

    again = env.jupcron("pause", "--all", "--by", "bob")  # no new reason: the old one stays
    assert again.returncode == 0, again.stderr
    assert "paused all plans: incident 12 (paused already since" in again.stdout
    assert "reason kept" in again.stdout
    new = env.jupcron("pause", "--all", "--reason", "incident 13")
    assert "reason replaced" in new.stdout

    resumed = env.jupcron("resume", "--all")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed all plans" in resumed.stdout
    assert "incident 13" in resumed.stdout

    # a database section that does not load is still an error, in one line
    env.config.write_text("database: {url: mysql://x}\nguard: {nope: 1}\n")
    broken = env.jupcron("pause", "--all")
    assert broken.returncode == 1
    assert broken.stderr.startswith("error:")
    assert "Traceback" not in broken.stderr
