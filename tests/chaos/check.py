"""The invariants at the end of a chaos run, from the emulator's ledger and the store.

* duplicates: slots (run rows; one per plan and fire time by the unique claim)
  with more than one order landed at the emulator;
* lost: scheduled slots up to the end (minus a margin for a fire in flight)
  with no run row — catch-up records slots missed while the daemon was down,
  so every slot must have one — plus landed orders no run row explains
  (by signature, by requestId, or by an `ordered` event's request_id);
* wrong: rows whose record contradicts the ledger (a succeeded run with no
  landed order, a landed order under a failed/skipped/rejected run), and runs
  still in flight after the quiet settling period.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import text

from jupcron.emulator.ledger import Execution
from jupcron.scheduling.schedule import fire_times_between, parse_schedule
from jupcron.store.engine import make_engine

# a slot this close to the stop may not have been claimed yet
STOP_MARGIN = timedelta(seconds=3)
# a new plan's first slot is the first after its apply began writing (`plans.apply`),
# which is after the apply's `now` (the plan's created_at) by the time it took to read
# and check the files: seconds on a loaded machine. A slot this close after created_at
# may not be the plan's at all (make test counted 16:54:28 of a plan written at 28.x)
APPLY_MARGIN = timedelta(seconds=3)
# statuses under which a landed order is fine
LANDED_OK = {"succeeded", "in_doubt"}


@dataclass
class Verdict:
    fires: int = 0
    runs: int = 0
    status: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    lost: int = 0
    wrong: int = 0
    details: list[str] = field(default_factory=list)


def _aware(value: Any) -> datetime:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    assert isinstance(moment, datetime)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def read_store(url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            plans = [dict(r._mapping) for r in conn.execute(
                text("SELECT id, name, schedule, created_at FROM plans"))]  # fmt: skip
            runs = [dict(r._mapping) for r in conn.execute(text(
                "SELECT id, plan_id, scheduled_for, status, request_id, signature FROM runs"))]  # fmt: skip
            events = list(conn.execute(
                text("SELECT run_id, step, detail FROM run_events WHERE step IN ('ordered', 'signed')")))  # fmt: skip
    finally:
        engine.dispose()
    return plans, runs, events


def check(url: str, landed: list[Execution], stopped_at: datetime) -> Verdict:
    plans, runs, events = read_store(url)
    verdict = Verdict(runs=len(runs))
    verdict.status.update(r["status"] for r in runs)

    # slots: every scheduled slot (plan active, before the stop) has a run row
    claimed = {(r["plan_id"], _aware(r["scheduled_for"])) for r in runs}
    for plan in plans:
        schedule = parse_schedule(_json(plan["schedule"]))
        since = _aware(plan["created_at"]) + APPLY_MARGIN
        for slot in fire_times_between(schedule, since, stopped_at - STOP_MARGIN):
            verdict.fires += 1
            if (plan["id"], slot) not in claimed:
                verdict.lost += 1
                verdict.details.append(f"lost slot: plan {plan['name']} at {slot.isoformat()}")

    # landed orders: each explained by exactly one run, at most one per run
    by_key: dict[str, int] = {}
    for r in runs:
        for key in (r["request_id"], r["signature"]):
            if key:
                by_key[key] = r["id"]
    for run_id, _step, detail in events:
        data = _json(detail)
        for key in (data.get("request_id"), data.get("signature")):
            if key:
                by_key.setdefault(str(key), run_id)
    status_of = {r["id"]: r["status"] for r in runs}
    per_run: Counter[int] = Counter()
    for e in landed:
        run_id = by_key.get(e.signature, by_key.get(e.request_id))
        if run_id is None:
            verdict.lost += 1
            verdict.details.append(f"landed order with no run: requestId {e.request_id}")
            continue
        per_run[run_id] += 1
        if e.status == "Success" and status_of[run_id] not in LANDED_OK:
            verdict.wrong += 1
            verdict.details.append(f"run {run_id} is {status_of[run_id]} but its order landed")
    for run_id, n in per_run.items():
        if n > 1:
            verdict.duplicates += 1
            verdict.details.append(f"duplicate: run {run_id} has {n} landed orders")

    landed_sigs = {e.signature for e in landed}
    for r in runs:
        if r["status"] == "succeeded" and r["signature"] not in landed_sigs:
            verdict.wrong += 1
            verdict.details.append(f"run {r['id']} succeeded but nothing landed")
        if r["status"] in ("pending", "requested", "signed", "submitted"):
            verdict.wrong += 1
            verdict.details.append(f"run {r['id']} still {r['status']} after settling")
    return verdict


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        loaded: dict[str, Any] = json.loads(value)
        return loaded
    return dict(value)
