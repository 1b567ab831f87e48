"""A running daemon follows its config file (issue 14, item 1): `safety.dry_run`
flipped both ways by editing the file as the README says, with no restart and no
SIGHUP; every run records the dry-run state and the config it ran under; a broken
edit is refused whole, logged once, and nothing is signed meanwhile."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan

FINAL = ("succeeded", "failed", "rejected", "skipped", "dry_run", "in_doubt")


def claimed_runs(env: DaemonEnv) -> list[dict[str, Any]]:
    """Each run with its status, signature and its `claimed` event's detail."""
    engine = make_engine(env.db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT a.run_id, a.status, a.signature, e.detail FROM audit a "
                "JOIN run_events e ON e.run_id = a.run_id AND e.step = 'claimed' "
                "ORDER BY a.run_id"
            )).all()  # fmt: skip
    finally:
        engine.dispose()
    out = []
    for run_id, status, signature, detail in rows:
        claim = detail if isinstance(detail, dict) else json.loads(detail)
        out.append({**claim, "run_id": run_id, "status": status, "signature": signature})
    return out


def final_under(env: DaemonEnv, digest: str, dry_run: bool) -> list[dict[str, Any]]:
    return [
        r
        for r in claimed_runs(env)
        if r.get("config") == digest and r.get("dry_run") is dry_run and r["status"] in FINAL
    ]


def edit_in_place(path: Path, old: str, new: str) -> None:
    """An edit as an operator makes it: the one line changed, the rest as it was."""
    body = path.read_text()
    assert body.count(old) == 1, body
    path.write_text(body.replace(old, new))


def edit_by_rename(path: Path, old: str, new: str) -> None:
    """An editor's save: a new file renamed over the old one (a new inode)."""
    body = path.read_text()
    assert body.count(old) == 1, body
    fresh = path.with_name(path.name + ".swp")
    fresh.write_text(body.replace(old, new))
    os.replace(fresh, path)


def status_dry_run(env: DaemonEnv) -> bool | None:
    """The dry-run state `jupcron status` reports for the running daemon."""
    done = env.jupcron("status", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return None if not data["running"] else data["dry_run"]


def test_dry_run_flips_both_ways_by_editing_the_config_and_a_broken_edit_is_refused(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_config(safety={"dry_run": True})
    env.write_plans(swap_plan("often", {"every": "2s"}))
    applied = env.jupcron("plans", "apply")
    assert applied.returncode == 0, applied.stderr
    assert f"safety.dry_run: true in {env.config}: " in applied.stdout
    proc = env.start()
    ledger = env.emulator.ledger
    try:
        # dry: runs are ordered and checked, never signed
        assert env.wait_until(lambda: env.events(proc, "daemon_started"), 30)
        dry_digest = env.events(proc, "daemon_started")[0]["config"]
        assert env.events(proc, "daemon_started")[0]["dry_run"] is True
        assert env.wait_until(lambda: len(final_under(env, dry_digest, True)) >= 2, 60), env.log_of(
            proc
        )
        assert all(r["source"] == "safety.dry_run" for r in final_under(env, dry_digest, True))
        assert env.wait_until(lambda: env.status()["dry_run"] is True, 30)
        assert status_dry_run(env) is True

        # live: `safety.dry_run: false` in the file, saved; nothing else
        edit_in_place(env.config, '"dry_run": true', '"dry_run": false')
        assert env.wait_until(lambda: env.events(proc, "config_reloaded"), 30), env.log_of(proc)
        live = env.events(proc, "config_reloaded")[0]
        assert live["trigger"] == "file"
        assert live["changed"] == ["safety.dry_run: true -> false"]
        assert live["dry_run"] is False
        assert live["previous"] == dry_digest
        assert env.wait_until(lambda: len(final_under(env, live["config"], False)) >= 2, 60), (
            env.log_of(proc)
        )
        signed = final_under(env, live["config"], False)
        assert {r["status"] for r in signed} == {"succeeded"}, signed
        assert all(r["source"] is None for r in signed)
        assert env.wait_until(lambda: env.status()["dry_run"] is False, 30)
        assert status_dry_run(env) is False  # what status says
        landed = {e.signature for e in ledger.landed()}
        assert {r["signature"] for r in signed} <= landed
        # the operator's check of the config they read
        again = env.jupcron("plans", "apply")
        assert again.returncode == 0, again.stderr
        assert f"safety.dry_run: false in {env.config}: runs sign" in again.stdout

        # dry again, saved the way many editors save (a new file renamed over the old)
        edit_by_rename(env.config, '"dry_run": false', '"dry_run": true')
        assert env.wait_until(lambda: len(env.events(proc, "config_reloaded")) >= 2, 30)
        back = env.events(proc, "config_reloaded")[1]
        assert back["changed"] == ["safety.dry_run: false -> true"]
        assert back["dry_run"] is True
        assert back["config"] == dry_digest  # the same content as at the start

        def dry_after_live() -> bool:
            runs = claimed_runs(env)
            last_live = max(r["run_id"] for r in runs if r.get("config") == live["config"])
            return any(r["run_id"] > last_live for r in final_under(env, dry_digest, True))

        assert env.wait_until(dry_after_live, 60), env.log_of(proc)
        assert env.wait_until(lambda: env.status()["dry_run"] is True, 30)
        assert status_dry_run(env) is True

        # a broken edit: refused whole, said once, the daemon stays dry and signs nothing
        before_bad = len(final_under(env, dry_digest, True))
        edit_in_place(env.config, '"dry_run": true', '"dry_run": "maybe"')
        assert env.wait_until(lambda: env.events(proc, "reload_failed"), 30), env.log_of(proc)
        failed = env.events(proc, "reload_failed")[0]
        assert failed["what"] == "config"
        assert failed["trigger"] == "file"
        assert "safety.dry_run" in failed["error"]
        assert failed["kept"] == dry_digest
        assert failed["dry_run"] is True
        assert env.wait_until(
            lambda: len(final_under(env, dry_digest, True)) >= before_bad + 3, 60
        ), env.log_of(proc)
        assert len(env.events(proc, "reload_failed")) == 1  # not once a second
        assert len(env.events(proc, "config_reloaded")) == 2
        assert proc.poll() is None
    finally:
        assert env.stop(proc) == 0, env.log_of(proc)
    runs = claimed_runs(env)
    # every run ran as its claim says: dry ones never signed, live ones signed and landed
    for run in runs:
        if run["status"] not in FINAL:
            continue
        if "dry_run" not in run:
            # a slot the scheduler itself recorded as skipped (missed, on a loaded
            # machine): it never reached the runner, so it has no dry-run state
            assert (run["status"], run["signature"]) == ("skipped", None), run
        elif run["dry_run"]:
            assert (run["status"], run["signature"]) == ("dry_run", None), run
        elif run["status"] == "dry_run":
            # claimed live, and the edit back to dry_run: true reached it before it signed
            assert (run["config"], run["signature"]) == (live["config"], None), run
        else:
            assert (run["config"], run["status"]) == (live["config"], "succeeded"), run
    assert {e.signature for e in ledger.landed()} == {
        r["signature"] for r in runs if not r.get("dry_run") and r["signature"]
    }


def test_each_run_records_what_made_it_a_dry_run(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()  # safety.dry_run: false
    careful = {**swap_plan("careful", {"every": "1h"}), "dry_run": True}
    env.write_plans(swap_plan("plain", {"every": "1h"}), careful)
    applied = env.jupcron("plans", "apply")
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[-1] == (
        f"safety.dry_run: false in {env.config}: runs sign and send their orders "
        "(except 1 plan with dry_run: true: careful)"
    )
    for args in (["plain", "--dry-run"], ["careful"], ["plain"]):
        done = env.jupcron("fire", *args)
        assert done.returncode == 0, done.stdout + done.stderr
    runs = claimed_runs(env)
    digest = runs[0]["config"]
    assert len(digest) == 12
    assert [(r["status"], r["dry_run"], r["source"], r["config"]) for r in runs] == [
        ("dry_run", True, "fire --dry-run", digest),
        ("dry_run", True, "plan", digest),
        ("succeeded", False, None, digest),
    ]
    env.write_config(safety={"dry_run": True})
    done = env.jupcron("fire", "plain")
    assert done.returncode == 0, done.stderr
    assert " dry_run " in done.stdout
    last = claimed_runs(env)[-1]
    assert (last["status"], last["source"]) == ("dry_run", "safety.dry_run")
    assert last["config"] != digest
