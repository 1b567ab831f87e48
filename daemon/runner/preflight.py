"""Safety limits checked before the order call: nothing is ordered past them.

Each check returns a reason to skip the run, or ``None``. The caps are
computed from the audit trail itself (the store), so they hold across
restarts and across daemons sharing one database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from daemon.config import Config
from daemon.errors import JupcronError
from daemon.store import audit
from daemon.store.models import Run
from daemon.store.records import PlanRecord
from daemon.store.types import PlanKind

DAY = timedelta(days=1)
WEEK = timedelta(days=7)


@dataclass(frozen=True)
class Spend:
    """What a plan's run would put in: the input mint and the raw amount."""

    mint: str | None
    amount: int


def spend_of(plan: PlanRecord) -> Spend:
    request = plan.request
    if plan.kind is PlanKind.RECURRING:
        params = request.get("params") or {}
        time = params.get("time") or {}
        price = params.get("price") or {}
        raw = time.get("inAmount", price.get("depositAmount", 0))
        return Spend(request.get("inputMint"), int(raw or 0))
    if plan.kind is PlanKind.SWAP:
        return Spend(request.get("inputMint"), int(request.get("amount") or 0))
    return Spend(None, 0)  # a cancel returns funds; it spends none


def kill_switch(config: Config) -> str | None:
    if config.safety.kill_switch:
        return "kill switch is on (safety.kill_switch)"
    path = config.safety.kill_switch_file
    if path is not None and path.exists():
        return f"kill switch file {path} exists"
    return None


def caps_apply(plan: PlanRecord, config: Config) -> bool:
    """Whether any cap limits this plan's runs (else `caps` has nothing to check)."""
    spend = spend_of(plan)
    if not spend.amount:
        return False
    settings = plan.settings
    plan_caps: Mapping[str, Any] = settings.get("caps") or {}
    if settings.get("max_in_amount") is not None or any(
        limit is not None for limit in plan_caps.values()
    ):
        return True
    return any(cap.mint == spend.mint for cap in config.safety.caps)


def caps(
    session: Session, plan: PlanRecord, config: Config, *, now: datetime, run_id: int
) -> str | None:
    spend = spend_of(plan)
    if not spend.amount:
        return None
    settings = plan.settings
    per_run = settings.get("max_in_amount")
    if per_run is not None and spend.amount > int(per_run):
        return f"input {spend.amount} is over the plan's max_in_amount {per_run}"
    plan_caps: Mapping[str, Any] = settings.get("caps") or {}
    for key, window in (("per_day", DAY), ("per_week", WEEK)):
        limit = plan_caps.get(key)
        if limit is None:
            continue
        used = audit.spent(session, since=now - window, plan_id=plan.id, exclude_run=run_id)
        if used + spend.amount > int(limit):
            return (
                f"plan cap {key}={limit} would be exceeded: {used} already committed, "
                f"this run adds {spend.amount}"
            )
    for cap in config.safety.caps:
        if cap.mint != spend.mint:
            continue
        for key, window, limit in (("per_day", DAY, cap.per_day), ("per_week", WEEK, cap.per_week)):
            if limit is None:
                continue
            used = audit.spent(session, since=now - window, input_mint=cap.mint, exclude_run=run_id)
            if used + spend.amount > limit:
                return (
                    f"cap on {cap.mint} {key}={limit} would be exceeded: {used} already "
                    f"committed, this run adds {spend.amount}"
                )
    return None


BalanceLookup = Callable[[str], Mapping[str, Any]]


def raw_balance(portfolio: Mapping[str, Any], mint: str) -> int:
    """The wallet's raw balance of `mint` from a portfolio `positions` answer."""
    decimals = None
    infos = (portfolio.get("tokenInfo") or {}).get("solana") or {}
    if mint in infos:
        decimals = infos[mint].get("decimals")
    total = Decimal(0)
    for element in portfolio.get("elements") or []:
        if element.get("label") not in (None, "Wallet"):
            continue
        for asset in (element.get("data") or {}).get("assets") or []:
            data = asset.get("data") or {}
            if data.get("address") != mint:
                continue
            if "rawAmount" in data:
                return int(data["rawAmount"])
            try:
                total += Decimal(str(data.get("amount", 0)))
            except InvalidOperation:
                continue
    if decimals is None:
        decimals = 9 if mint.startswith("So1111") else 6
    return int(total * (Decimal(10) ** int(decimals)))


def wants_balance_check(plan: PlanRecord, config: Config) -> bool:
    wanted = plan.settings.get("balance_check")
    return bool(config.safety.balance_check if wanted is None else wanted)


def balance(api: Any, wallet: str, plan: PlanRecord, observe: Callable[[Any], None]) -> str | None:
    """A reason to skip when the wallet holds less of the input mint than the run needs."""
    spend = spend_of(plan)
    if not spend.mint or not spend.amount:
        return None
    try:
        portfolio = api.positions(wallet, None, observe)
    except JupcronError as exc:
        return f"balance check failed: {exc}"
    raw = getattr(portfolio, "raw", portfolio)
    have = raw_balance(raw if isinstance(raw, Mapping) else {}, spend.mint)
    if have < spend.amount:
        return f"insufficient balance: {have} of {spend.mint} < {spend.amount} needed"
    return None


def reserve(session: Session, run_id: int, plan: PlanRecord) -> None:
    """Record the run's input on its (pending) row, so later cap checks count it."""
    spend = spend_of(plan)
    if spend.mint and spend.amount:
        session.execute(
            update(Run)
            .where(Run.id == run_id)
            .values(
                input_mint=spend.mint,
                in_amount=str(spend.amount),
                output_mint=plan.request.get("outputMint"),
            )
        )
