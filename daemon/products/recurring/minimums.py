"""Jupiter's recurring minimums that need the network (API.md): no Token-2022
mints, at least 100 USD in total and 50 USD per order.

The schema checks USDC/USDT inputs offline. For the rest this module asks
where it can: a mint's owner program via ``rpc.url`` (a Token-2022 mint is
refused), and a non-stablecoin input's USD value via an API quote into USDC
(an input worth less than the minimums is refused). Where it cannot ask, it
says so in a note and leaves the check to the API, which refuses the order
when the plan fires. `plans validate` and `plans apply` run it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import TypeVar

from jupcron.chain.programs import TOKEN_2022
from jupcron.config import Config, api_key
from jupcron.errors import JupcronError, Problem
from jupcron.mints import STABLECOINS
from jupcron.plans.load import LoadedPlan
from jupcron.products.recurring.model import (
    RECURRING_MIN_PER_ORDER_USD,
    RECURRING_MIN_TOTAL_USD,
    RecurringRequest,
)

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
USDC_DECIMALS = 6
# mints owned by the SPL Token program (not Token-2022): no need to ask
SPL_TOKEN_MINTS = frozenset({*STABLECOINS, "So11111111111111111111111111111111111111112"})

OwnerLookup = Callable[[str], str | None]  # mint -> owner program (None: no such account)
UsdLookup = Callable[[str, int], Decimal]  # (mint, base units) -> USD value now
T = TypeVar("T")


@dataclass
class Findings:
    problems: list[Problem] = field(default_factory=list)  # refused: nothing is applied
    notes: list[Problem] = field(default_factory=list)  # told (warnings, checks not made)


@dataclass
class Lookups:
    """The network seams: None where they cannot be asked, with the reason."""

    owner: OwnerLookup | None = None
    usd: UsdLookup | None = None
    no_owner: str = "set rpc.url to check it"
    no_usd: str = "no API to ask"
    _close: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def close(self) -> None:
        for close in self._close:
            close()


def lookups_from(config: Config) -> Lookups:
    """rpc.url for mint owners, the configured API (one attempt a call) for prices."""
    # the network clients are imported here: `plans validate --offline`, and apply
    # with nothing to ask, never load them
    from jupcron.api.client import JupiterClient
    from jupcron.chain.rpc import rpc_from_config

    found = Lookups()
    rpc = rpc_from_config(config.rpc)  # the same rules as the daemon's (no plain http out)
    if rpc is not None:
        found.owner, found._close = (lambda mint: rpc.owners([mint])[mint]), [rpc.close]
    try:
        key = api_key(config)
    except JupcronError as exc:
        found.no_usd = f"the API key cannot be read: {exc}"
        return found
    one_try = config.api.model_copy(update={"max_attempts": 1})  # a price is not worth retries
    api_config = config.model_copy(update={"api": one_try})
    client = JupiterClient.from_config(api_config, key)
    found._close.append(client.close)

    def usd(mint: str, amount: int) -> Decimal:
        quote = client.quote(mint, USDC, amount)
        return Decimal(quote.out_amount) / Decimal(10) ** USDC_DECIMALS

    found.usd = usd
    return found


def needs_network(plan: LoadedPlan) -> bool:
    """A recurring plan whose minimums the schema could not check offline."""
    request = plan.spec.request
    if not isinstance(request, RecurringRequest):
        return False
    mints = {request.input_mint, request.output_mint}
    return not mints <= SPL_TOKEN_MINTS or request.input_mint not in STABLECOINS


def check_recurring(plans: Iterable[LoadedPlan], lookups: Lookups) -> Findings:
    """Token-2022 mints and USD minimums of the recurring plans among `plans`."""
    findings = Findings()
    for plan in plans:
        if needs_network(plan):
            _check(plan, lookups, findings)
    return findings


def _check(plan: LoadedPlan, lookups: Lookups, findings: Findings) -> None:
    request = plan.spec.request
    assert isinstance(request, RecurringRequest)
    name = plan.spec.name

    def at(message: str) -> Problem:
        return Problem(plan.source, plan.line, plan.column, f"plan '{name}': {message}")

    for key, mint in (("inputMint", request.input_mint), ("outputMint", request.output_mint)):
        if mint not in SPL_TOKEN_MINTS:
            _check_program(key, mint, lookups, findings, at)
        # a mint with no account is refused for every kind (daemon/plans/mints.py)
    if request.input_mint not in STABLECOINS:
        _check_value(request, lookups, findings, at)


def _check_program(
    key: str, mint: str, lookups: Lookups, findings: Findings, at: Callable[[str], Problem]
) -> None:
    """A Token-2022 mint is refused (Recurring does not support them)."""
    owner = _asked(
        lookups.owner and partial(lookups.owner, mint), findings, at,
        missing=f"note: request.{key} {mint} was not checked for Token-2022, which "
        f"Recurring does not support ({lookups.no_owner})",
        failed=lambda exc: f"note: request.{key} {mint} was not checked for Token-2022: "
        f"rpc.url did not answer ({exc})",
    )  # fmt: skip
    if owner == TOKEN_2022:
        findings.problems.append(at(
            f"request.{key} {mint} is a Token-2022 mint (rpc.url says its owner is the "
            "Token-2022 program): Jupiter Recurring does not support Token-2022 mints"
        ))  # fmt: skip


def _asked(
    ask: Callable[[], T] | None,
    findings: Findings,
    at: Callable[[str], Problem],
    *,
    missing: str,
    failed: Callable[[JupcronError], str],
) -> T | None:
    """What `ask` answers; None, with a note, when it cannot be asked (`missing`) or
    does not answer (`failed`: the note on its error)."""
    if ask is None:
        findings.notes.append(at(missing))
        return None
    try:
        return ask()
    except JupcronError as exc:
        findings.notes.append(at(failed(exc)))
        return None


def _check_value(
    request: RecurringRequest,
    lookups: Lookups,
    findings: Findings,
    at: Callable[[str], Problem],
) -> None:
    time, price = request.params.time, request.params.price
    amount = time.in_amount if time is not None else price.deposit_amount if price else 0
    key = "params.time.inAmount" if time is not None else "params.price.depositAmount"
    minimums = f"at least {RECURRING_MIN_TOTAL_USD} USD in total"
    if time is not None:
        minimums += f" and {RECURRING_MIN_PER_ORDER_USD} USD per order"
    mint = request.input_mint
    left = f"Jupiter's minimums ({minimums}) are left to the API when the plan fires"
    value = _asked(
        lookups.usd and partial(lookups.usd, mint, amount), findings, at,
        missing=f"note: request.{key} was not priced ({lookups.no_usd}); {left}",
        failed=lambda exc: f"note: request.{key} could not be priced ({exc}); {left}",
    )  # fmt: skip
    if value is None:
        return
    total = value.quantize(Decimal("0.01"))
    worth = f"request.{key}: {amount} base units of {mint} are worth {total} USD now (an API quote)"
    if total < RECURRING_MIN_TOTAL_USD:
        findings.problems.append(at(
            f"{worth}; a recurring order needs at least {RECURRING_MIN_TOTAL_USD} USD in total"
        ))  # fmt: skip
    if time is not None:
        each = (total / time.number_of_orders).quantize(Decimal("0.01"))
        if each < RECURRING_MIN_PER_ORDER_USD:
            findings.problems.append(at(
                f"{worth}, {each} USD per order (inAmount / numberOfOrders); the minimum is "
                f"{RECURRING_MIN_PER_ORDER_USD} USD per order"
            ))  # fmt: skip
