"""Price protection at the order step (docs/price-protection.md): the run's
`Protection` (daemon/price/protection.py) computed once the API has answered, and
the quote held to the plan's limits.

A swap's order answer carries its quote (``outAmount``) for the input it states
(``inAmount``): an answer for any other input than the plan's amount is refused
(``rejected``, `answered_amount`); below the least output the plan's ``limits``
allow, the run ends ``skipped`` with the reason before anything is signed. The
floors are computed for the plan's amount, never the answer's. What the run was
held to (the least output, the reference price and output) goes into its
``ordered`` event, so `jupcron report` can put each fill against the reference of
its time. Holding the *transaction* to the
same numbers (its guaranteed minimum out) is txguard's part.
"""

from __future__ import annotations

from typing import Any

import structlog

from jupcron.price.limits import LimitCheck
from jupcron.price.protection import Protection, pair_of, protection_for
from jupcron.products.base import Ordered
from jupcron.runner.ports import Ports
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)


def answered_amount(planned: int, ordered: Ordered) -> str | None:
    """Why the order answer's input amount rules the run out (a reason to refuse it),
    or None. A swap's answer is a quote (it carries the swap's terms) and states the
    input it spends (``inAmount``): it must be the plan's amount, as every genuine
    answer's is; missing, zero or another amount, the quote is for something the plan
    did not ask for. Other kinds state no amount, or the plan's own."""
    said = ordered.in_amount
    if said is None and ordered.swap is None:
        return None
    if said == planned:
        return None
    what = "states no input amount (inAmount)" if said is None else f"spends {said} (inAmount)"
    return (
        f"the order answer {what}; the plan spends {planned}: its quote and price "
        "protection would be for another amount, so nothing is signed"
    )


def at_quote(
    ports: Ports, plan: PlanRecord, in_amount: int, quoted_out: int | None
) -> tuple[Protection | None, str | None]:
    """The run's protection (None for a plan that trades nothing) and a reason to skip
    it: the quote is below the plan's least output. `in_amount`: what the run spends,
    the plan's amount (`answered_amount` refused any other first).

    The oracle is read here, after the order call, and the reference's age
    (``price.max_age``) is judged at this instant, never at the order step's start:
    the call between may have waited minutes (the pacer, backoff, a 429's
    Retry-After), and a feed that stopped as the run began would be taken for fresh
    however old it was when read."""
    if pair_of(plan.request) is None:
        return None, None
    protection = protection_for(plan, in_amount, ports.rpc, ports.config, ports.clock())
    if protection.warning is not None:
        log.warning("price_reference_unusable", plan=plan.name, warning=protection.warning)
    if protection.min_out is None or quoted_out is None:
        return protection, None
    check = LimitCheck(protection.min_out, quoted_out)
    return protection, None if check.ok else check.reason()


def detail(protection: Protection | None) -> dict[str, Any]:
    """For the ``ordered`` (or skip) event."""
    return {} if protection is None else {"price": protection.detail()}
