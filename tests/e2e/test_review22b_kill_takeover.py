"""kill -9 at each failpoint while a second daemon holds the same wallet's standby
(review 22b, lead 2): the heir takes the wallet over and settles the dead one's
run; once signed, the same signed bytes are reposted (never a fresh order), the run
is not `in_doubt` (the heir can settle it), and each slot has one order at most."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from jupcron import failpoints
from jupcron.store.engine import make_engine
from tests.chaos.check import check
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.timeout(240)]

TIMEOUT = 60.0
IN_FLIGHT = ("pending", "requested", "signed", "submitted")


def read(url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            runs = [dict(r._mapping) for r in conn.execute(text(
                "SELECT id, scheduled_for, status, request_id, signature, claimed_by "
                "FROM runs ORDER BY id"))]  # fmt: skip
            events = [dict(r._mapping) for r in conn.execute(text(
                "SELECT run_id, step, detail FROM run_events ORDER BY id"))]  # fmt: skip
    finally:
        engine.dispose()
    return runs, events


def detail(event: dict[str, Any]) -> dict[str, Any]:
    value = event["detail"]
    return json.loads(value) if isinstance(value, str) else dict(value or {})


# the point after signing (all of failpoints.NAMES passed when this was written; the
# chaos runs kill at every point): ~19 s each, in make test
@pytest.mark.parametrize("point", [p for p in failpoints.NAMES if p == "after_sign"])
def test_sigkill_at_a_failpoint_then_the_standby_settles_the_run(
    daemon_env: DaemonEnvFactory, pg_url: str, point: str
) -> None:
    env = daemon_env(db_url=pg_url)
    env.write_config(logging={"level": "info", "format": "json"}, api={"swap_api": "swap-v2"})
    env.write_plans(swap_plan("tick", {"every": "2s", "grace": 60}))
    env.apply()
    dead = env.start({"JUPCRON_FAILPOINTS": f"{point}:2"})
    assert env.wait_until(lambda: "became_leader" in env.log_of(dead), timeout=TIMEOUT)
    heir = env.start()
    assert env.wait_until(lambda: dead.poll() is not None, timeout=TIMEOUT), env.log_of(dead)
    runs, _ = read(pg_url)
    left = {r["id"] for r in runs if r["status"] in IN_FLIGHT}
    assert left, runs
    assert env.wait_until(
        lambda: not any(r["status"] in IN_FLIGHT for r in read(pg_url)[0] if r["id"] in left),
        timeout=TIMEOUT,
    ), (read(pg_url)[0], env.log_of(heir)[-3000:])
    stopped_at = datetime.now(UTC)
    assert env.stop(heir, timeout=60) == 0, env.log_of(heir)[-3000:]
    runs, events = read(pg_url)
    for run in runs:
        if run["id"] not in left:
            continue
        mine = [e for e in events if e["run_id"] == run["id"]]
        signed = [detail(e)["signature"] for e in mine if e["step"] == "signed"]
        ordered = [e for e in mine if e["step"] == "ordered"]
        assert run["status"] == "succeeded", (run, [e["step"] for e in mine])
        if point in ("after_sign", "before_execute", "after_execute"):
            # signed before the kill: the same bytes settled it, no second order
            assert len(signed) == 1, [e["step"] for e in mine]
            assert len(ordered) == 1, [e["step"] for e in mine]
            assert run["signature"] == signed[0]
    verdict = check(pg_url, env.emulator.ledger.landed(), stopped_at)
    assert verdict.duplicates == 0, verdict.details
    assert verdict.lost == 0, verdict.details
    assert verdict.wrong == 0, verdict.details
    slots = Counter(r["scheduled_for"] for r in runs)
    assert max(slots.values()) == 1
