"""`jupcron settle RUN_ID`: an operator's verdict on an in_doubt run, as a subprocess.

The runs are real (fired against the emulator, their transactions landed on
its ledger); the test then marks them in_doubt in the store, as a lost
execute answer with no RPC node would have left them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan


def in_doubt_run(env: DaemonEnv, name: str) -> int:
    done = env.jupcron("fire", name)
    assert done.returncode == 0, done.stderr
    engine = make_engine(env.db_url)
    try:
        with engine.begin() as conn:
            run_id = conn.execute(
                text("SELECT max(r.id) FROM runs r JOIN plans p ON p.id = r.plan_id "
                     "WHERE p.name = :name"), {"name": name},
            ).scalar_one()  # fmt: skip
            conn.execute(
                text("UPDATE runs SET status = 'in_doubt', error = 'lost answer' WHERE id = :id"),
                {"id": run_id},
            )
    finally:
        engine.dispose()
    return int(run_id)


def events(env: DaemonEnv, run_id: int) -> list[tuple[str, Any]]:
    engine = make_engine(env.db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT step, detail FROM run_events WHERE run_id = :id ORDER BY id"),
                {"id": run_id},
            )
            return [(step, detail) for step, detail in rows]
    finally:
        engine.dispose()


def test_settle_records_the_verdict_and_who_gave_it(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    env.write_plans(swap_plan("a", {"every": "1d"}), swap_plan("b", {"every": "1d"}))
    env.apply()
    landed = in_doubt_run(env, "a")
    lost = in_doubt_run(env, "b")

    done = env.jupcron(
        "settle", str(landed), "--landed", "--reason", "seen in explorer", "--by", "al"
    )
    assert done.returncode == 0, done.stderr
    assert f"run {landed}  succeeded" in done.stdout
    (row,) = env.rows(f"run_id = {landed}")
    assert (row["status"], row["error"]) == ("succeeded", None)
    step, detail = events(env, landed)[-1]
    assert step == "settled_by_operator"
    assert '"by": "al"' in str(detail) or "'by': 'al'" in str(detail)

    done = env.jupcron("settle", str(lost), "--not-landed", "--reason", "not found after 10 min")
    assert done.returncode == 0, done.stderr
    (row,) = env.rows(f"run_id = {lost}")
    assert row["status"] == "failed"
    assert row["error_code"] == "settled_by_operator"
    assert row["error"].endswith(": not found after 10 min")
    assert row["error"].startswith("settled by ")


def test_settle_changes_nothing_when_it_should_not(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    assert env.jupcron("fire", "a").returncode == 0
    (done_row,) = env.rows()

    again = env.jupcron("settle", str(done_row["run_id"]), "--landed", "--reason", "x")
    assert again.returncode == 1
    assert again.stderr.strip() == (
        f"error: run {done_row['run_id']} is succeeded, not in_doubt: there is nothing to settle"
    )
    unknown = env.jupcron("settle", "999", "--landed", "--reason", "x")
    assert (unknown.returncode, unknown.stderr.strip()) == (1, "error: no run 999 in the store")
    no_reason = env.jupcron("settle", str(done_row["run_id"]), "--landed")
    assert no_reason.returncode == 2
    assert "--reason" in no_reason.stderr
    no_verdict = env.jupcron("settle", str(done_row["run_id"]), "--reason", "x")
    assert no_verdict.returncode == 2
    assert "--landed" in no_verdict.stderr
    assert env.rows() == [done_row]  # untouched
    assert "Traceback" not in again.stderr + unknown.stderr + no_reason.stderr


def test_the_rpc_node_can_veto_a_verdict_it_contradicts(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_config(rpc={"url": env.server.url + "/rpc"})
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    run_id = in_doubt_run(env, "a")  # its transaction did land on the emulator's ledger

    wrong = env.jupcron("settle", str(run_id), "--not-landed", "--reason", "not in explorer")
    assert wrong.returncode == 1
    assert "the RPC node says signature" in wrong.stderr
    assert "landed; nothing changed" in wrong.stderr
    assert env.rows()[0]["status"] == "in_doubt"

    right = env.jupcron("settle", str(run_id), "--landed", "--reason", "rpc agrees")
    assert right.returncode == 0, right.stderr
    assert env.rows()[0]["status"] == "succeeded"
    step, detail = events(env, run_id)[-1]
    assert step == "settled_by_operator"
    assert "rpc_landed" in str(detail)

    # --force records a verdict the RPC node disagrees with
    forced_id = in_doubt_run(env, "a")
    forced = env.jupcron(
        "settle", str(forced_id), "--not-landed", "--reason", "explorer is right", "--force"
    )
    assert forced.returncode == 0, forced.stderr
    assert env.rows(f"run_id = {forced_id}")[0]["status"] == "failed"
    step, detail = events(env, forced_id)[-1]
    assert step == "settled_by_operator"
    assert "forced" in str(detail)


def record_not_found(env: DaemonEnv, run_id: int, *, expired: bool) -> None:
    """The event settle_unanswered writes when the RPC node has not seen the signature."""
    engine = make_engine(env.db_url)
    detail = '{"found": false, "err": "None", "expired": %s}' % ("true" if expired else "false")
    try:
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO run_events (run_id, at, step, detail) "
                     "VALUES (:id, :at, 'rpc_status', :detail)"),
                {"id": run_id, "at": "2026-01-01 00:00:00", "detail": detail},
            )  # fmt: skip
    finally:
        engine.dispose()


def test_landed_against_a_recorded_not_found_needs_force(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    early = in_doubt_run(env, "a")
    record_not_found(env, early, expired=False)  # before expiry: proves nothing
    done = env.jupcron("settle", str(early), "--landed", "--reason", "seen in explorer")
    assert done.returncode == 0, done.stderr

    run_id = in_doubt_run(env, "a")
    record_not_found(env, run_id, expired=True)
    refused = env.jupcron("settle", str(run_id), "--landed", "--reason", "seen in explorer")
    assert refused.returncode == 1
    assert "did not find signature" in refused.stderr
    assert "after its blockhash had expired" in refused.stderr
    assert "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert env.rows(f"run_id = {run_id}")[0]["status"] == "in_doubt"

    not_landed = env.jupcron("settle", str(run_id), "--not-landed", "--reason", "agrees")
    assert not_landed.returncode == 0, not_landed.stderr  # the verdict it supports: no --force

    forced_id = in_doubt_run(env, "a")
    record_not_found(env, forced_id, expired=True)
    forced = env.jupcron(
        "settle", str(forced_id), "--landed", "--reason", "explorer shows it", "--force"
    )
    assert forced.returncode == 0, forced.stderr
    assert env.rows(f"run_id = {forced_id}")[0]["status"] == "succeeded"
    step, detail = events(env, forced_id)[-1]
    assert step == "settled_by_operator"
    assert "forced" in str(detail)


def test_landed_against_the_rpc_nodes_not_found_needs_force(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_config(rpc={"url": env.server.url + "/rpc"})
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    run_id = in_doubt_run(env, "a")
    engine = make_engine(env.db_url)
    unknown = "5" * 87  # a well-formed signature the emulator's chain never saw
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE runs SET signature = :s WHERE id = :id"),
                         {"s": unknown, "id": run_id})  # fmt: skip
    finally:
        engine.dispose()
    refused = env.jupcron("settle", str(run_id), "--landed", "--reason", "seen it")
    assert refused.returncode == 1, refused.stdout
    assert f"the RPC node does not know signature {unknown}" in refused.stderr
    assert env.rows()[0]["status"] == "in_doubt"


def test_not_landed_against_an_order_the_follower_found_needs_force(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    """Before: accepted, so a run whose transaction opened a followed order became
    failed (and its order's later fills and refund were no longer followed)."""
    env = daemon_env(db_url=db_url)
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    run_id = in_doubt_run(env, "a")
    (row,) = env.rows(f"run_id = {run_id}")
    engine = make_engine(env.db_url)
    try:
        with engine.begin() as conn:  # what the follower stores for an order it found
            conn.execute(
                text("INSERT INTO followed_orders (order_account, source, run_id, state, "
                     "open_tx, first_seen_at, last_seen_at) VALUES ('Ord1', 'recurring', :id, "
                     "'open', :tx, :at, :at)"),
                {"id": run_id, "tx": row["signature"], "at": "2026-01-01 00:00:00"},
            )  # fmt: skip
    finally:
        engine.dispose()
    refused = env.jupcron("settle", str(run_id), "--not-landed", "--reason", "not in explorer")
    assert refused.returncode == 1, refused.stdout
    assert "the follower found order Ord1" in refused.stderr
    assert "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert env.rows(f"run_id = {run_id}")[0]["status"] == "in_doubt"
    landed = env.jupcron("settle", str(run_id), "--landed", "--reason", "the follower saw it")
    assert landed.returncode == 0, landed.stderr
    step, detail = events(env, run_id)[-1]
    assert step == "settled_by_operator"
    assert "Ord1" in str(detail)
