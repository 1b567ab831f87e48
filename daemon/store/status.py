"""What `jupcron status` (and the status page's JSON twins) show, read in a handful
of queries whatever the number of plans: the daemons by their heartbeats, the
pauses, each plan's next fire time and last result, runs in flight, and runs
`in_doubt` waiting for the operator. Frozen values out; `as_json` for scripts.

Times in JSON are UTC text (``2026-11-23T10:00:05Z``), as on the status page.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Table, func, select
from sqlalchemy.orm import Session

from jupcron.domain import DEFAULT_WALLET, IN_FLIGHT, RunStatus
from jupcron.scheduling.schedule import Schedule, next_fire_times, parse_schedule
from jupcron.scheduling.zones import tz_data
from jupcron.store import control
from jupcron.store import runway as store_runway
from jupcron.store.control import NodeBeat
from jupcron.store.models import Plan, Run
from jupcron.store.port import Pause
from jupcron.store.records import PlanRecord
from jupcron.store.runway import RunwayState, runway_json

RUNS = cast(Table, Run.__table__)
PLANS = cast(Table, Plan.__table__)
MAX_RUNS = 1000  # runs listed per kind (in flight, in doubt); `count` has them all
MAX_PLANS = 1000  # plans listed, by name; `plans_count` has them all
SETTLE = "jupcron settle {run_id} --landed|--not-landed --reason TEXT"


@dataclass(frozen=True)
class LastRun:
    run_id: int
    scheduled_for: datetime
    status: RunStatus
    error: str | None
    finished_at: datetime | None


@dataclass(frozen=True)
class PlanState:
    name: str
    kind: str
    enabled: bool
    next_fire: datetime | None  # None: disabled, or no fire time left
    last: LastRun | None
    pause: Pause | None  # the pause in effect for it (its own, or every plan's)
    wallet: str = DEFAULT_WALLET  # the wallet that signs its runs (its configured name)


@dataclass(frozen=True)
class RunBrief:
    run_id: int
    plan_name: str
    kind: str
    scheduled_for: datetime
    status: RunStatus
    trigger: str
    signature: str | None
    error: str | None
    updated_at: datetime
    wallet: str = DEFAULT_WALLET  # the wallet the run is for (its configured name)

    @property
    def settle(self) -> str | None:
        """The command that settles it, for a run in doubt."""
        return SETTLE.format(run_id=self.run_id) if self.status is RunStatus.IN_DOUBT else None


@dataclass(frozen=True)
class RunList:
    runs: tuple[RunBrief, ...]  # the oldest `MAX_RUNS`
    count: int  # all of them


@dataclass(frozen=True)
class Status:
    now: datetime
    daemons: tuple[NodeBeat, ...]  # running ones first, the leader first; stale ones last
    pauses: tuple[Pause, ...]
    plans: tuple[PlanState, ...]
    in_flight: RunList
    in_doubt: RunList
    runways: tuple[RunwayState, ...] = ()  # per wallet and input mint, as the leader read them
    plans_count: int = 0  # every plan (`plans` lists the first `MAX_PLANS` by name)

    @property
    def running(self) -> tuple[NodeBeat, ...]:
        return tuple(n for n in self.daemons if n.running(self.now))

    @property
    def leader(self) -> NodeBeat | None:
        return next((n for n in self.running if n.role == "leader"), None)


def daemons(session: Session) -> list[NodeBeat]:
    return control.nodes(session.connection())


def pauses(session: Session) -> list[Pause]:
    return control.pauses(session.connection())


def plans_count(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(PLANS)) or 0)


def last_runs(session: Session, plan_ids: Collection[int] | None = None) -> dict[int, LastRun]:
    """Every plan's newest run (by slot), in one query; only these plans' if given."""
    latest = select(RUNS.c.plan_id, func.max(RUNS.c.scheduled_for).label("slot"))
    if plan_ids is not None:
        if not plan_ids:
            return {}
        latest = latest.where(RUNS.c.plan_id.in_(list(plan_ids)))
    latest_q = latest.group_by(RUNS.c.plan_id).subquery()
    newest = (RUNS.c.plan_id == latest_q.c.plan_id) & (RUNS.c.scheduled_for == latest_q.c.slot)
    columns = (RUNS.c.plan_id, RUNS.c.id, RUNS.c.scheduled_for, RUNS.c.status, RUNS.c.error,
               RUNS.c.finished_at)  # fmt: skip
    stmt = select(*columns).join(latest_q, newest)
    return {
        r.plan_id: LastRun(r.id, r.scheduled_for, RunStatus(r.status), r.error, r.finished_at)
        for r in session.execute(stmt)
    }


def plan_states(
    session: Session, now: datetime, found: Iterable[Pause] = (), limit: int = MAX_PLANS
) -> tuple[list[PlanState], int]:
    """The first `limit` plans by name (next fire time after `now`, last run, pause),
    and how many plans there are (counted in the same query)."""
    known = list(found)
    stmt = select(PLANS.c.id, PLANS.c.name, PLANS.c.kind, PLANS.c.enabled, PLANS.c.schedule,
                  PLANS.c.wallet, func.count().over().label("total"))  # fmt: skip
    rows = list(session.execute(stmt.order_by(PLANS.c.name).limit(limit)))
    lasts = last_runs(session, [row.id for row in rows])
    out = []
    for row in rows:
        out.append(PlanState(
            name=row.name, kind=row.kind, enabled=bool(row.enabled),
            next_fire=_next_fire(row.schedule, now) if row.enabled else None,
            last=lasts.get(row.id), pause=control.pause_in_effect(known, row.name),
            wallet=row.wallet,
        ))  # fmt: skip
    return out, int(rows[0].total) if rows else 0


def states_of(
    session: Session, plans: Iterable[PlanRecord], now: datetime, found: Iterable[Pause] = ()
) -> list[PlanState]:
    """The states of these plans (a page of them, already read), in their order: the
    same values as `plan_states`, with one query for their last runs."""
    records = list(plans)
    known = list(found)
    lasts = last_runs(session, [p.id for p in records])
    return [
        PlanState(
            name=p.name, kind=str(p.kind), enabled=p.enabled,
            next_fire=_first_fire(p.schedule, now) if p.enabled else None,
            last=lasts.get(p.id), pause=control.pause_in_effect(known, p.name),
            wallet=p.wallet,
        )
        for p in records
    ]  # fmt: skip


def _next_fire(schedule: dict[str, Any], now: datetime) -> datetime | None:
    try:
        parsed = parse_schedule(schedule)
    except ValueError:  # a stored schedule this version cannot read: no time to show
        return None
    return _first_fire(parsed, now)


def _first_fire(schedule: Schedule, now: datetime) -> datetime | None:
    fires = next_fire_times(schedule, now, 1)
    return fires[0] if fires else None


def runs_in(session: Session, statuses: Iterable[RunStatus], limit: int = MAX_RUNS) -> RunList:
    """Runs in these statuses, oldest first, with their plan's name and kind."""
    wanted = [str(s) for s in statuses]
    where = RUNS.c.status.in_(wanted)
    count = session.scalar(select(func.count()).select_from(RUNS).where(where)) or 0
    columns = (RUNS.c.id, PLANS.c.name, PLANS.c.kind, RUNS.c.scheduled_for, RUNS.c.status,
               RUNS.c.trigger, RUNS.c.signature, RUNS.c.error, RUNS.c.updated_at,
               RUNS.c.wallet)  # fmt: skip
    stmt = (
        select(*columns)
        .join(PLANS, PLANS.c.id == RUNS.c.plan_id)
        .where(where)
        .order_by(RUNS.c.id)
        .limit(limit)
    )
    found = tuple(_brief(r) for r in session.execute(stmt))
    return RunList(found, int(count))


def _brief(r: Any) -> RunBrief:
    return RunBrief(
        run_id=r.id, plan_name=r.name, kind=r.kind, scheduled_for=r.scheduled_for,
        status=RunStatus(r.status), trigger=r.trigger, signature=r.signature,
        error=r.error, updated_at=r.updated_at, wallet=r.wallet,
    )  # fmt: skip


BAD_RUNS = (RunStatus.FAILED, RunStatus.REJECTED, RunStatus.IN_DOUBT)


def run_errors_since(session: Session, since: datetime) -> int:
    """Runs that ended failed, rejected or in doubt since `since`, whoever ran them
    (this daemon, another, or `jupcron fire` in a shell): one count in the store."""
    query = select(func.count()).where(
        Run.status.in_([str(s) for s in BAD_RUNS]), Run.updated_at >= since
    )
    return int(session.execute(query).scalar_one())


def overview(session: Session, now: datetime) -> Status:
    """The status without the plans (``plans`` empty): the daemons, the pauses and
    the runs that need a look, and the runways, in six queries."""
    found = pauses(session)
    nodes = sorted(daemons(session), key=lambda n: (not n.running(now), n.role != "leader"))
    return Status(
        now=now, daemons=tuple(nodes), pauses=tuple(found), plans=(),
        in_flight=runs_in(session, sorted(IN_FLIGHT)),
        in_doubt=runs_in(session, [RunStatus.IN_DOUBT]),
        runways=tuple(store_runway.read(session.connection())),
    )  # fmt: skip


def read(session: Session, now: datetime, limit: int = MAX_PLANS) -> Status:
    """The whole status, as of `now` (the first `limit` plans by name, and their count)."""
    head = overview(session, now)
    plans, count = plan_states(session, now, head.pauses, limit)
    return replace(head, plans=tuple(plans), plans_count=count)


# ---- JSON ---------------------------------------------------------------------------


def when(value: datetime | None) -> str | None:
    """UTC text, as the status page and the JSON twins show times."""
    if value is None:
        return None
    if value.tzinfo is None:  # read from a SQLite view: naive UTC
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_json(node: NodeBeat, now: datetime) -> dict[str, Any]:
    return {
        "node": node.node, "role": node.role, "since": when(node.role_since),
        "started_at": when(node.started_at), "last_beat": when(node.last_beat),
        "running": node.running(now), "dry_run": node.dry_run,
        "kill_switch": node.kill_switch, "version": node.version, "degraded": node.degraded,
        "wallets": None if node.wallets is None else list(node.wallets),
    }  # fmt: skip


def pause_json(pause: Pause) -> dict[str, Any]:
    return {
        "plan": None if pause.all_plans else pause.scope, "all": pause.all_plans,
        "reason": pause.reason, "by": pause.by, "at": when(pause.at),
    }  # fmt: skip


def plan_json(plan: PlanState) -> dict[str, Any]:
    last = plan.last
    return {
        "name": plan.name, "kind": plan.kind, "wallet": plan.wallet, "enabled": plan.enabled,
        "next_fire": when(plan.next_fire),
        "paused": None if plan.pause is None else plan.pause.skip_reason(),
        "last_run_id": last.run_id if last else None,
        "last_scheduled_for": when(last.scheduled_for) if last else None,
        "last_status": str(last.status) if last else None,
        "last_error": last.error if last else None,
    }  # fmt: skip


def run_json(run: RunBrief) -> dict[str, Any]:
    out = {
        "run_id": run.run_id, "plan_name": run.plan_name, "kind": run.kind,
        "scheduled_for": when(run.scheduled_for), "status": str(run.status),
        "trigger": run.trigger, "signature": run.signature, "error": run.error,
        "updated_at": when(run.updated_at), "wallet": run.wallet,
    }  # fmt: skip
    if run.settle is not None:
        out["settle"] = run.settle
    return out


def summary_json(status: Status) -> dict[str, Any]:
    """Everything `as_json` has but the plans (the status page's ``/api/status``
    carries these keys with these values); `dry_run` and `kill_switch` as the
    running daemons report them (``null`` when none runs)."""
    leader, running = status.leader, status.running
    return {
        "now": when(status.now),
        "running": bool(running),
        "leader": leader.node if leader else None,
        "dry_run": any(n.dry_run for n in running) if running else None,
        "kill_switch": next((n.kill_switch for n in running if n.kill_switch), None),
        "daemons": [node_json(n, status.now) for n in status.daemons],
        "pauses": [pause_json(p) for p in status.pauses],
        "in_flight": [run_json(r) for r in status.in_flight.runs],
        "in_flight_count": status.in_flight.count,
        "in_doubt": [run_json(r) for r in status.in_doubt.runs],
        "in_doubt_count": status.in_doubt.count,
        "runway": [runway_json(r) for r in status.runways],
        "tzdata": tz_data((n.node, n.version) for n in running),
    }


def as_json(status: Status) -> dict[str, Any]:
    """The status for scripts (`jupcron status --format json`)."""
    return {**summary_json(status), "plans": [plan_json(p) for p in status.plans],
            "plans_count": status.plans_count}  # fmt: skip
