"""Safety limits checked before the order call: nothing is ordered past them.

The kill switch (config or file, as the config in effect now has it), then an
operator's pause (`jupcron pause`, stored in the database), then the caps, then
the wallet's balance. The first two are checked again just before signing
(`stop_in_effect`).

Each check returns a reason to skip the run, or ``None``. The caps are
computed from the audit trail itself (the store), so they hold across
restarts and across daemons sharing one database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from jupcron.api.client import JupiterClient
from jupcron.config import Config
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import FatalError, JupcronError
from jupcron.plans.rules import in_amount_of
from jupcron.products.kinds import spec
from jupcron.runner.killswitch import kill_switch
from jupcron.runner.ports import Ports
from jupcron.store.port import CapWindow, Reservation
from jupcron.store.records import PlanRecord, RunRecord

DAY = timedelta(days=1)
WEEK = timedelta(days=7)


@dataclass(frozen=True)
class Spend:
    """What a plan's run would put in: the input mint and the raw amount."""

    mint: str | None
    amount: int


def spend_of(plan: PlanRecord) -> Spend:
    spent = in_amount_of(plan.request)
    if spent is None:
        return Spend(None, 0)  # a cancel returns funds; it spends none
    mint, amount, _ = spent
    return Spend(mint, amount)


def reservation_of(plan: PlanRecord) -> Reservation | None:
    """What a run of `plan` puts in (None: it spends nothing)."""
    spend = spend_of(plan)
    if not spend.amount or spend.mint is None:
        return None
    return Reservation(spend.mint, spend.amount, spec(plan.kind).output_mint(plan.request))


def claimed_spend(plan: PlanRecord, config: Config, *, dry_run: bool = False) -> Reservation | None:
    """What a run's row carries from its claim on: its spend when no cap limits it now,
    so that a cap a reload (or a plan edit) adds while it is ordering counts it. Such a
    run had no amount on its row until its `requested` step, and the first run checked
    under the new cap was let through beside it. None when a cap limits it: its amount
    goes on its row with the cap check (`reserve`, under the spend lock), so runs racing
    for the last of a cap count one another only once they passed. None for a `dry_run`
    (as claimed): it moves no money, so no cap may count it (`check`)."""
    return None if dry_run or caps_apply(plan, config) else reservation_of(plan)


def check(
    ports: Ports, run: RunRecord, plan: PlanRecord, now: datetime, *, dry_run: bool = False
) -> str | None:
    """Why this run must not be ordered (kill switch, an operator's pause, caps,
    balance), or ``None``; a capped run that passes has its amount reserved against the
    caps (under the spend lock: two runs racing for the last of a cap cannot both pass).
    A `dry_run` (as claimed: it is never signed) is checked against the caps alike, so
    the operator sees what a real run would meet, but reserves nothing: it moves no
    money, and a real run due beside it must not be skipped for its amount."""
    config = ports.config
    reason = stop_in_effect(ports, plan)
    if reason is None and caps_apply(plan, config):
        reason = reserve(ports, run, plan, now, hold=not dry_run)
    if reason is None and wants_balance_check(plan, config):
        reason = balance(ports.api, ports.wallet.address, plan, ports.book.observer(run.id))
    return reason


def stop_in_effect(ports: Ports, plan: PlanRecord) -> str | None:
    """Why nothing of `plan` may be ordered or signed at this instant, or ``None``: the
    kill switch as the config in effect now has it (a reload that turns it on reaches
    a run already past its pre-flight; the config the run was claimed with counts too,
    its switch file included), then an operator's pause."""
    return kill_switch(ports.config_now()) or kill_switch(ports.config) or paused(ports, plan)


def paused(ports: Ports, plan: PlanRecord) -> str | None:
    """`jupcron pause` (the plan's, or every plan's), as the store had it at most
    `PAUSE_TTL` seconds ago."""
    pause = ports.store.pause_of(plan.name)
    return None if pause is None else pause.skip_reason()


def caps_apply(plan: PlanRecord, config: Config) -> bool:
    """Whether any cap limits this plan's runs (else `caps` has nothing to check)."""
    spend = spend_of(plan)
    if not spend.amount:
        return False
    settings = plan.settings
    caps = settings.caps
    if settings.max_in_amount is not None or any(
        limit is not None for limit in (caps.per_day, caps.per_week)
    ):
        return True
    return any(cap.mint == spend.mint for cap in config.safety.caps)


def cap_windows(
    plan: PlanRecord,
    config: Config,
    now: datetime,
    wallet: str = DEFAULT_WALLET,
    owner: str | None = None,
) -> list[CapWindow]:
    """The plan's own caps, then the config's caps on its input mint, in that order. A
    config cap counts the runs of the run's wallet only (each wallet has its own
    budget), and one naming a wallet (``wallet:``) applies to that wallet's runs alone:
    chosen by the wallet's configured name (`wallet`), counted by its keypair (`owner`,
    its address), so that renaming a wallet does not restart its budget."""
    spend = spend_of(plan)
    out: list[CapWindow] = []
    plan_caps = plan.settings.caps
    for key, window, limit in (("per_day", DAY, plan_caps.per_day),
                               ("per_week", WEEK, plan_caps.per_week)):  # fmt: skip
        if limit is not None:
            name = f"plan cap {key}={limit}"
            # its runs of the mint it spends now (an edit may have changed the mint:
            # base units of two mints never add up)
            out.append(CapWindow(name, now - window, int(limit), plan_id=plan.id,
                                 input_mint=spend.mint))  # fmt: skip
    for cap in config.safety.caps:
        if cap.mint != spend.mint or cap.wallet not in (None, wallet):
            continue
        for key, window, cap_limit in (("per_day", DAY, cap.per_day),
                                       ("per_week", WEEK, cap.per_week)):  # fmt: skip
            if cap_limit is not None:
                name = f"cap on {cap.mint} {key}={cap_limit} (wallet {wallet})"
                out.append(CapWindow(name, now - window, cap_limit, input_mint=cap.mint,
                                     wallet=wallet, owner=owner))  # fmt: skip
    return out


def reserve(
    ports: Ports, run: RunRecord, plan: PlanRecord, now: datetime, *, hold: bool = True
) -> str | None:
    """Check the caps and reserve this run's amount in one serialized transaction, so
    two runs racing for the last of a cap cannot both pass (a run no cap limited when
    it was claimed has its amount on its row from its claim on: `claimed_spend`).
    Without `hold` (a dry run) the caps are only read: nothing is reserved."""
    reservation = reservation_of(plan)
    if reservation is None:
        return None
    amount = reservation.in_amount
    per_run = plan.settings.max_in_amount
    if per_run is not None and amount > per_run:
        return f"input {amount} is over the plan's max_in_amount {per_run}"
    caps = cap_windows(plan, ports.config, now, ports.wallet_name, ports.wallet.address)
    if hold:
        hit = ports.store.reserve(run.id, reservation, caps, now=now, owner=ports.wallet.address)
    else:
        hit = ports.store.cap_hit(run.id, reservation, caps)
    if hit is None:
        return None
    return f"{hit.cap.name} would be exceeded: {hit.used} already committed, this run adds {amount}"


def wants_balance_check(plan: PlanRecord, config: Config) -> bool:
    wanted = plan.settings.balance_check
    return bool(config.safety.balance_check if wanted is None else wanted)


def balance(
    api: JupiterClient, wallet: str, plan: PlanRecord, observe: Callable[[Any], None]
) -> str | None:
    """A reason to skip when the wallet holds less of the input mint than the run needs."""
    spend = spend_of(plan)
    if not spend.mint or not spend.amount:
        return None
    try:
        portfolio = api.positions(wallet, None, observe)
    except FatalError:
        raise  # a refused API key stops the daemon; it is no reason to skip one run
    except JupcronError as exc:
        return f"balance check failed: {exc}"
    unknown = portfolio.balance_unknown(spend.mint)
    if unknown is not None:
        return f"balance check failed: {unknown}"
    have = portfolio.balance_of(spend.mint)
    if have < spend.amount:
        return f"insufficient balance: {have} of {spend.mint} < {spend.amount} needed"
    return None
