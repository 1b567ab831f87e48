"""The runways in the store (table ``runways``): written by the leader's runway watch
(daemon/service/runway.py), read by `jupcron status` and the status page. One row
per wallet and input mint; a refresh replaces the wallet's rows whole (a mint no
plan spends any more goes)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Connection, Table, delete, insert, select

from jupcron.scheduling.runway import Runway, ui
from jupcron.store.models import RunwayRow
from jupcron.store.tokens import plain, short

RUNWAYS = cast(Table, RunwayRow.__table__)


@dataclass(frozen=True)
class RunwayState:
    """A `Runway` as stored: with the token's label, the threshold it was judged by
    and whether it was under it (`low`: the alert was sent when it became so)."""

    runway: Runway
    symbol: str | None
    decimals: int | None
    low: bool
    threshold: int
    horizon_s: int
    checked_at: datetime

    @property
    def label(self) -> str:
        return self.symbol or short(self.runway.mint)

    def amount(self, base_units: int | None) -> str | None:
        """``12.5 USDC`` (token units when the decimals are known), else base units."""
        if base_units is None:
            return None
        if self.decimals is None:
            return f"{base_units} (base units of {self.label})"
        return f"{plain(ui(base_units, self.decimals))} {self.label}"


def save(conn: Connection, wallet: str, states: list[RunwayState]) -> None:
    """The wallet's runways now: its rows replaced by these."""
    conn.execute(delete(RUNWAYS).where(RUNWAYS.c.wallet == wallet))
    if not states:
        return
    conn.execute(insert(RUNWAYS), [_values(s) for s in states])


def _values(state: RunwayState) -> dict[str, Any]:
    r = state.runway
    return {
        "wallet": r.wallet, "mint": r.mint, "symbol": state.symbol, "decimals": state.decimals,
        "balance": None if r.balance is None else str(r.balance), "runs": r.runs,
        "upcoming": r.upcoming, "needed": str(r.needed), "short_at": r.short_at,
        "horizon_s": state.horizon_s, "plans": list(r.plans), "low": state.low,
        "threshold": state.threshold, "problem": r.problem, "checked_at": state.checked_at,
    }  # fmt: skip


def read(conn: Connection, wallet: str | None = None) -> list[RunwayState]:
    """Every stored runway (one wallet's, if given), by wallet and mint."""
    stmt = select(RUNWAYS).order_by(RUNWAYS.c.wallet, RUNWAYS.c.mint)
    if wallet is not None:
        stmt = stmt.where(RUNWAYS.c.wallet == wallet)
    out = []
    for row in conn.execute(stmt):
        runway = Runway(
            wallet=row.wallet, mint=row.mint,
            balance=None if row.balance is None else int(row.balance), runs=row.runs,
            upcoming=row.upcoming, needed=int(row.needed), short_at=row.short_at,
            plans=tuple(row.plans or ()), problem=row.problem,
        )  # fmt: skip
        out.append(RunwayState(
            runway, row.symbol, row.decimals, bool(row.low), row.threshold, row.horizon_s,
            row.checked_at,
        ))  # fmt: skip
    return out


def moment(value: datetime | None) -> str | None:
    """UTC text (``2026-11-23T10:00:05Z``), as `jupcron status` shows times."""
    if value is None:
        return None
    if value.tzinfo is None:  # read from SQLite: naive UTC
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _span(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def runway_text(state: RunwayState) -> str:
    """How `jupcron status` and the page say a runway (unknown is said as unknown)."""
    r = state.runway
    if not r.known:
        return f"unknown ({r.problem or 'no balance read'})"
    if r.short_at is None:
        return f"covers all {r.upcoming} run(s) in the next {_span(state.horizon_s)}"
    low = f" LOW (alert below {state.threshold})" if state.low else ""
    return (f"{r.runs} of {r.upcoming} run(s) in {_span(state.horizon_s)}, "
            f"short at {moment(r.short_at)}{low}")  # fmt: skip


def runway_json(state: RunwayState) -> dict[str, Any]:
    """One runway for scripts and the page: amounts as base-unit strings beside token
    units (None while unknown: never 0)."""
    r = state.runway
    return {
        "wallet": r.wallet, "mint": r.mint, "symbol": state.symbol,
        "decimals": state.decimals,
        "balance": None if r.balance is None else str(r.balance),
        "balance_ui": (None if r.balance is None or state.decimals is None
                       else plain(ui(r.balance, state.decimals))),
        "runs": r.runs, "upcoming": r.upcoming, "covers_all": r.covers_all,
        "needed": str(r.needed), "short_at": moment(r.short_at), "plans": list(r.plans),
        "low": state.low, "alert_below": state.threshold, "horizon_s": state.horizon_s,
        "problem": r.problem, "checked_at": moment(state.checked_at),
        "summary": runway_text(state),
    }  # fmt: skip
