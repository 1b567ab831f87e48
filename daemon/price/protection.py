"""`protection_for`: a run's price protection, computed once, for the runner and txguard.

    min_out        the least output (base units of the output mint, the whole run)
                   the plan's ``limits`` allow for the run's input; None: no limit
    reference_out  what the oracle says the run's input is worth in the output
                   mint (base units); None: no reference (no ``rpc.url``, a mint
                   without a feed, or a stale feed under ``price.on_stale: warn``)
    deviation_bps  ``guard.max_price_deviation_bps``: how far the guaranteed
                   minimum out may sit below ``reference_out``
    problem        a reason to refuse to sign, or None: a price limit whose mints'
                   decimals cannot be known ("when unsure, do not sign"), or a
                   covered pair's reference stale/missing under ``on_stale: refuse``

Recurring and Trigger V2 DCA plans spend their input over several cycles; the
values here are for the whole run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import structlog

from jupcron.config import Config
from jupcron.errors import JupcronError
from jupcron.plans.rules import in_amount_of
from jupcron.plans.schema import Request
from jupcron.price.limits import UnknownDecimals, decimals_of, minimum_out
from jupcron.price.oracle import AccountState
from jupcron.price.reference import Reference, feeds_of, reference_for
from jupcron.products import kinds
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)


class PriceRpc(Protocol):
    """The part of `jupcron.chain.rpc.SolanaRpc` price protection reads through."""

    def accounts(self, addresses: Sequence[str]) -> Sequence[AccountState | None]: ...
    def mint_decimals(self, mint: str) -> int | None: ...


@dataclass(frozen=True)
class Protection:
    min_out: int | None
    reference_out: int | None
    deviation_bps: int
    problem: str | None
    warning: str | None = None  # signed anyway (``on_stale: warn``): record it
    reference: Reference | None = None  # what the oracle said, for the run's record

    def detail(self) -> dict[str, Any]:
        """For the run's events: what the run was held to."""
        found: dict[str, Any] = {
            "min_out": None if self.min_out is None else str(self.min_out),
            "reference_out": None if self.reference_out is None else str(self.reference_out),
            "max_price_deviation_bps": self.deviation_bps,
        }
        if self.reference is not None:
            found["reference"] = self.reference.detail()
        if self.problem is not None:
            found["problem"] = self.problem
        if self.warning is not None:
            found["warning"] = self.warning
        return found


def pair_of(request: Request) -> tuple[str, str] | None:
    """(input mint, output mint) of a kind that trades; None for cancels."""
    return kinds.spec_of(request).pair(request)


def planned_amount(request: Request) -> int | None:
    """What a run of the plan spends (base units of its input mint); None: nothing."""
    spent = in_amount_of(request)
    return None if spent is None else spent[1]


def protection_for(
    plan: PlanRecord, in_amount: int, rpc: PriceRpc | None, config: Config, now: datetime
) -> Protection:
    """The price protection of a run of `plan` at `now` (module docstring).

    The floors are always for what the plan spends (`planned_amount`: txguard lets
    the transaction spend that much, never more), whatever `in_amount` says: the
    amount the run's order states it spends (a swap answer's ``inAmount``). An
    `in_amount` that is not the plan's (none, zero, smaller, larger) is a `problem`,
    so the run is refused, never held to a smaller floor or to none. Never raises
    for RPC trouble: an unanswered read is a missing decimals value or reference."""
    bps = config.guard.max_price_deviation_bps
    pair = pair_of(plan.request)
    if pair is None:
        return Protection(None, None, bps, None)
    limits = plan.settings.limits
    planned = planned_amount(plan.request)
    if planned is None or planned <= 0:
        least = None if limits is None else limits.min_out
        problem = "the plan states no amount to hold its price to: not signing"
        return Protection(least, None, bps, problem)
    problems: list[str] = []
    if in_amount != planned:
        problems.append(
            f"the order answer's input amount {in_amount} is not the plan's {planned}; "
            "the price floors are for what the plan spends: not signing"
        )
    input_mint, output_mint = pair
    cache: dict[str, int | None] = {}

    def decimals(mint: str) -> int | None:
        if mint not in cache:
            cache[mint] = decimals_of(mint, _chain_decimals(rpc))
        return cache[mint]

    min_out = None
    if limits is not None:
        try:
            in_dec = decimals(input_mint) if limits.has_price else None
            out_dec = decimals(output_mint) if limits.has_price else None
            min_out = minimum_out(limits, input_mint, output_mint, planned, in_dec, out_dec)
        except UnknownDecimals as exc:
            min_out = limits.min_out
            problems.append(f"the plan's price limit cannot be applied: {exc}; not signing")
        except ValueError as exc:
            min_out = limits.min_out
            problems.append(f"the plan's price limit cannot be applied: {exc}")
    reference, warning = _reference(
        rpc, config, input_mint, output_mint, planned, decimals, now, problems
    )
    ref_out = None if reference is None or reference.problem else reference.out_amount
    return Protection(min_out, ref_out, bps, "; ".join(problems) or None, warning, reference)


def _chain_decimals(rpc: PriceRpc | None) -> Any:
    if rpc is None:
        return None

    def read(mint: str) -> int | None:
        try:
            return rpc.mint_decimals(mint)
        except JupcronError as exc:
            log.warning("mint_decimals_unknown", mint=mint, error=str(exc))
            return None

    return read


def _reference(
    rpc: PriceRpc | None,
    config: Config,
    input_mint: str,
    output_mint: str,
    in_amount: int,
    decimals: Any,
    now: datetime,
    problems: list[str],
) -> tuple[Reference | None, str | None]:
    """The reference (None: no rpc or the pair is not covered) and a warning to record;
    a refusal goes to `problems`."""
    if rpc is None:
        return None, None
    feeds = feeds_of(config)
    if input_mint not in feeds or output_mint not in feeds:
        return None, None
    try:
        reference = reference_for(
            rpc, feeds, input_mint, output_mint, in_amount,
            (decimals(input_mint), decimals(output_mint)),
            now=now.timestamp(), max_age=config.price.max_age,
        )  # fmt: skip
    except JupcronError as exc:
        reference = Reference(input_mint, output_mint, in_amount, problem=f"RPC: {exc}")
    if reference is None or reference.problem is None:
        return reference, None
    text = f"no usable reference price ({reference.problem})"
    if config.price.on_stale == "refuse":
        problems.append(f"{text}; price.on_stale is refuse")
        return reference, None
    return reference, f"{text}; signed without the reference check (price.on_stale: warn)"
