"""Price protection at the order step (docs/price-protection.md): the run's
`Protection` (daemon/price/protection.py) computed once the API has answered, and
the quote held to the plan's limits.

A swap's order answer carries its quote (``outAmount``); below the least output
the plan's ``limits`` allow, the run ends ``skipped`` with the reason before
anything is signed. What the run was held to (the least output, the reference
price and output) goes into its ``ordered`` event, so `jupcron report` can put
each fill against the reference of its time. Holding the *transaction* to the
same numbers (its guaranteed minimum out) is txguard's part.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import structlog

from jupcron.price.limits import LimitCheck
from jupcron.price.protection import Protection, pair_of, protection_for
from jupcron.runner.ports import Ports
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)


def at_quote(
    ports: Ports, plan: PlanRecord, in_amount: int, quoted_out: int | None, now: datetime
) -> tuple[Protection | None, str | None]:
    """The run's protection (None for a plan that trades nothing) and a reason to skip
    it: the quote is below the plan's least output."""
    if pair_of(plan.request) is None:
        return None, None
    protection = protection_for(plan, in_amount, ports.rpc, ports.config, now)
    if protection.warning is not None:
        log.warning("price_reference_unusable", plan=plan.name, warning=protection.warning)
    if protection.min_out is None or quoted_out is None:
        return protection, None
    check = LimitCheck(protection.min_out, quoted_out)
    return protection, None if check.ok else check.reason()


def detail(protection: Protection | None) -> dict[str, Any]:
    """For the ``ordered`` (or skip) event."""
    return {} if protection is None else {"price": protection.detail()}
