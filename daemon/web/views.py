"""The JSON views (the page renders the same values): read-only, built on
`jupcron status`'s reads (daemon/store/status.py: the daemons by their
heartbeats, the pauses, each plan's next fire and last result, runs in flight
and in doubt, in a fixed number of queries) and `jupcron report`'s figures, with
nothing secret in them (no key, token, URL, transaction; the wallet address is
public). Where a twin and `jupcron status --format json` show the same thing,
they use the same field names and values (`status.summary_json`, `plan_json`,
`run_json`); the twins add what the page needs besides.

Times are UTC text (``2026-11-23T10:00:05Z``); amounts are base units as
strings (a u64 is no JSON double) beside token units where the decimals are
known.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from jupcron.domain import RunStatus
from jupcron.listen.page import LiveState
from jupcron.report.build import build, wallet_of
from jupcron.report.plan import PlanReport
from jupcron.scheduling.schedule import next_fire_times
from jupcron.store import plans as store_plans
from jupcron.store import status as store_status
from jupcron.store import tokens
from jupcron.store.audit import AuditFilter, audit_rows
from jupcron.store.records import PlanRecord
from jupcron.store.status import SETTLE, plan_json, summary_json, when
from jupcron.web.activity import Counts
from jupcron.web.chart import series
from jupcron.web.text import (
    node_text,
    pause_text,
    plan_text,
    run_text,
    runway_text,
    status_text,
)

NEXT_FIRES = 3  # fire times shown per plan
PAGE_SIZE = 100  # plans per page
MAX_PAGE = 500
RUNS_SHOWN = 50
MAX_RUNS = 500
REPORT_TTL = 2.0  # seconds one report serves the page, its twins and its charts
IN_DOUBT_HELP = (
    "Look the signature up on-chain (an explorer or your RPC node), then record what "
    "you found: " + SETTLE
)
RUN_FIELDS = ("run_id", "plan_name", "kind", "scheduled_for", "status", "trigger", "request_id",
              "signature", "error_code", "error", "in_amount", "out_amount", "spent",
              "received", "finished_at", "wallet")  # fmt: skip


class ReportCache:
    """`jupcron report` over the plans a page shows, built at most once per `ttl`
    seconds for the same plans: the page, its JSON twins and each plan's chart read
    one build, and a build reads only those plans' rows (not 100,000 plans' runs)."""

    def __init__(
        self, ttl: float = REPORT_TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl, self._clock = ttl, clock
        self._lock = threading.Lock()
        self._built: dict[tuple[str, ...], float] = {}
        self._values: dict[tuple[str, ...], Reports] = {}

    def get(self, conn: Connection, names: Iterable[str]) -> Reports:
        """The cached report of these plans, rebuilt on `conn` when older than the ttl."""
        key = tuple(sorted(names))
        with self._lock:
            now = self._clock()
            if now - self._built.get(key, float("-inf")) >= self._ttl:
                for old in [k for k, at in self._built.items() if now - at >= self._ttl]:
                    del self._built[old], self._values[old]  # the page moved on
                reports, known = build(conn, names=key)
                pairs: dict[str, list[PlanReport]] = {}
                for report in reports:  # a plan's current pair first (`jupcron.report.pairs`)
                    pairs.setdefault(report.plan_name, []).append(report)
                self._values[key] = (pairs, known)
                self._built[key] = now
            return self._values[key]


# every row of each plan, one per pair it traded, its main row (its current pair: the
# card's figures and chart) first; and the token facts
Reports = tuple[dict[str, list[PlanReport]], dict[str, tokens.Token]]


def _run(row: dict[str, Any]) -> dict[str, Any]:
    out = {key: row.get(key) for key in RUN_FIELDS}
    for key in ("scheduled_for", "finished_at"):
        out[key] = when(row.get(key))
    for key in ("in_amount", "out_amount", "spent", "received"):
        value = out[key]
        out[key] = None if value is None else str(value)
    out["status"] = str(row["status"])
    if out["status"] == RunStatus.IN_DOUBT:
        out["settle"] = SETTLE.format(run_id=row["run_id"])
    out["text"] = run_text(out)
    return out


def runs_view(session: Session, limit: int = RUNS_SHOWN) -> dict[str, Any]:
    """The newest runs (the audit view's rows, newest slot first)."""
    rows = audit_rows(session, AuditFilter(limit=max(1, min(limit, MAX_RUNS))))
    return {"runs": [_run(row) for row in rows]}


def _brief(run: dict[str, Any]) -> dict[str, Any]:
    return {**run, "text": run_text(run)}


def status_view(
    session: Session, live: LiveState, counts: Counts, now: datetime, refresh: float
) -> dict[str, Any]:
    """The daemons (every node by its heartbeat; this one marked), what is in effect
    (dry run, pauses, kill switch), how busy this daemon is, what needs a human."""
    view = summary_json(store_status.overview(session, now))
    for node in view["daemons"]:
        node["this"] = node["node"] == live.node
        node["text"] = node_text(node)
    for pause in view["pauses"]:
        pause["text"] = pause_text(pause)
    view["in_flight"] = [_brief(r) for r in view["in_flight"]]
    view["in_doubt"] = [_brief(r) for r in view["in_doubt"]]
    for runway in view["runway"]:
        runway["text"] = runway_text(runway)
    own = next((n for n in view["daemons"] if n["this"]), None)
    view.update({
        "refresh": refresh,
        "node": live.node,
        "role": own["role"] if own and own["running"] else None,
        # what this daemon runs without (its heartbeat's; daemon/service/dependencies.py)
        "degraded": own.get("degraded") if own else None,
        "wallet": live.wallet,
        "plans_enabled": store_plans.count_enabled(session),
        "plans_count": store_status.plans_count(session),  # as `jupcron status` counts them
        "api": {
            "rate_limit": live.rate_limit,
            "requests_last_minute": counts.requests_last_minute,
            "rate": round(counts.rate(), 3),
            "use": round(counts.rate() / live.rate_limit, 3) if live.rate_limit else None,
        },
        "errors_last_hour": {  # API attempts: this daemon's; runs: all, from the store
            "api": counts.api_errors_last_hour,
            "runs": store_status.run_errors_since(session, now - timedelta(hours=1)),
        },
        "in_doubt_help": IN_DOUBT_HELP if view["in_doubt"] else None,
        "plan_files": live.plan_files_on(session) if live.plan_files_on else live.plan_files,
    })  # fmt: skip
    view["text"] = status_text(view)
    return view


def _next_fires(plan: PlanRecord, now: datetime) -> tuple[str, list[str]]:
    schedule = plan.schedule
    words = f"once, at {when(schedule.at)}" if schedule.at is not None else schedule.describe()
    if schedule.end is not None:
        words += f" until {when(schedule.end)}"
    return words, [t for t in map(when, next_fire_times(schedule, now, NEXT_FIRES)) if t]


MONEY_KEYS = ("wallet", "input_mint", "output_mint", "input_symbol", "output_symbol", "spent",
              "spent_ui", "received", "received_ui", "refunded", "refunded_ui", "refund_symbol",
              "fills", "unmeasured_runs", "unmeasured_spent", "unmeasured_spent_ui",
              "average_price", "average_cost", "price_quote", "price_base", "last_fill",
              "network_fee_sol", "priority_fee_sol", "current_price", "current_value",
              "unrealised_pnl")  # fmt: skip


def _money(
    rows: Sequence[PlanReport], known: dict[str, tokens.Token], wallet: str | None = None
) -> dict[str, Any] | None:
    """The card's figures: the plan's main pair's (its first row), and ``other_pairs``
    — the same figures of each other pair it traded (never added to the main pair's).
    `wallet`, the plan's wallet now: a plan moved to it that has not run with it has no
    row of it (its first row is an earlier wallet's), so the card's own figures are
    none yet, and every row is among the others, led by its wallet's name."""
    main = main_row(rows, known, wallet)
    if main is None:
        return None
    others = list(rows[1:]) if main is rows[0] else list(rows)
    money = _figures(main, known)
    money["other_pairs"] = [_figures(other, known) for other in others]
    return money


def main_row(
    rows: Sequence[PlanReport], known: dict[str, tokens.Token], wallet: str | None
) -> PlanReport | None:
    """The plan's row its card, chart and fills show: its first row (its current wallet's
    current pair), or, when that is an earlier wallet's (`wallet`, the plan's wallet now,
    has not run it yet), a row of `wallet` with no figures."""
    if not rows:
        return None
    if wallet is not None and rows[0].wallet != wallet:
        return _unrun(rows[0], wallet, known)
    return rows[0]


def _unrun(row: PlanReport, wallet: str, known: dict[str, tokens.Token]) -> PlanReport:
    """The plan's row of a wallet it has not run with: its facts, no figures."""
    empty = PlanReport(row.plan_name, row.kind, row.input_mint, row.output_mint, wallet=wallet,
                       price_quote_override=row.price_quote_override)  # fmt: skip
    empty.input_token = known.get(row.input_mint or "")
    empty.output_token = known.get(row.output_mint or "")
    return empty


def _figures(report: PlanReport, known: dict[str, tokens.Token]) -> dict[str, Any]:
    data = report.as_dict(known)
    figures = {key: data[key] for key in MONEY_KEYS}
    # the page reads value now and P&L to the quote token's own unit (web/text.py)
    figures["quote_decimals"] = report.quote_token.decimals if report.quote_token else None
    return figures


def chart_url(name: str, money: dict[str, Any] | None) -> str | None:
    """The chart of a plan with fills; the query changes with each new fill, so the
    page fetches a new picture exactly when there is one."""
    if not money or not money["fills"]:
        return None
    return f"/charts/{name}.svg?fills={money['fills']}"


def plans_view(
    session: Session, cache: ReportCache, now: datetime, offset: int = 0, limit: int = PAGE_SIZE
) -> dict[str, Any]:
    """One page of the enabled plans, by name: `jupcron status`'s fields for each
    (next fire, pause, last result), then the schedule in words, the next fire
    times and the report's figures."""
    offset = max(0, offset)
    limit = max(1, min(limit, MAX_PAGE))
    total = store_plans.count_enabled(session)
    page = store_plans.enabled_page(session, offset, limit)
    states = store_status.states_of(session, page, now, store_status.pauses(session))
    pairs, known = cache.get(session.connection(), [p.name for p in page])
    shown = []
    for plan, state in zip(page, states, strict=True):
        words, fires = _next_fires(plan, now)
        money = _money(pairs.get(plan.name, ()), known, plan.wallet)
        item = {
            **plan_json(state), "description": plan.description,
            "schedule": words, "next_fires": fires, "dry_run": plan.settings.dry_run,
            "money": money, "chart": chart_url(plan.name, money),
        }  # fmt: skip
        item["text"] = plan_text(item)
        shown.append(item)
    first = offset + 1 if shown else 0
    span = f"{first}–{offset + len(shown)} of {total}"
    return {"total": total, "offset": offset, "limit": limit, "plans": shown,
            "text": {"range": span}}  # fmt: skip


def chart_row(session: Session, cache: ReportCache, name: str) -> PlanReport | None:
    """The row behind a plan's chart and its fills: its card's (`main_row`), the plan's
    current wallet's; ``None`` if there is no such plan."""
    conn = session.connection()
    pairs, known = cache.get(conn, [name])
    rows = pairs.get(name)
    return main_row(rows, known, wallet_of(conn, name)) if rows else None


def fills_view(session: Session, cache: ReportCache, name: str) -> dict[str, Any] | None:
    """The fills behind a plan's chart (its card's row: its current wallet's main pair,
    ``wallet`` says which); ``None`` if there is no such plan."""
    report = chart_row(session, cache, name)
    if report is None:
        return None
    return {
        "plan_name": name,
        "wallet": report.wallet,
        "input_symbol": report.input_token.label if report.input_token else None,
        "output_symbol": report.output_token.label if report.output_token else None,
        "fills": [point.as_dict() for point in series(report)],
    }
