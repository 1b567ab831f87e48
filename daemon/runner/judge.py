"""How a run's transaction is judged before anything is signed.

One function, `judge`, used by the runner's sign step (through `check`) and by
`jupcron tx inspect --plan`, so an operator's question "would the daemon sign
this for that plan, and why not?" gets exactly the runner's answer.

The plan's terms become one typed `Expectation`, built by one small function
per plan kind (`expectation`), from the plan and what its order call answered
(``ordered``: the facts of the run's ``ordered`` event — a swap's declared fee,
Trigger V2's vault and deposit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import structlog
from solders.pubkey import Pubkey

from jupcron.errors import RejectedError, RetryableError
from jupcron.plans.schema import RecurringRequest, SwapRequest, TriggerCancelRequest
from jupcron.runner import trigger_v2 as v2
from jupcron.runner.preflight import Spend, spend_of
from jupcron.runner.steps import output_mint_of
from jupcron.store.records import PlanRecord
from jupcron.store.types import PlanKind
from jupcron.txguard import GuardPolicy, Verdict, guard, inspect
from jupcron.txguard.expect import Expectation, RecurringTerms
from jupcron.txguard.simulate import Simulator

log = structlog.get_logger(__name__)


class Chain(Simulator, Protocol):
    """The RPC node, as the guard uses it: mint programs, and simulation."""

    def owners(self, addresses: Any) -> dict[str, str | None]: ...


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _price(ordered: Mapping[str, Any]) -> dict[str, Any]:
    """The run's price protection as its ``ordered`` event recorded it
    (`runner.pricecheck`): the least output, the reference, and any problem."""
    price = ordered.get("price")
    if not isinstance(price, Mapping):
        return {}
    problem = price.get("problem")
    return {
        "min_out": _int(price.get("min_out")),
        "reference_out": _int(price.get("reference_out")),
        "max_deviation_bps": _int(price.get("max_price_deviation_bps")),
        "price_problem": problem if isinstance(problem, str) else None,
    }


def _swap(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, SwapRequest)
    referral = request.referral_fee if request.referral_account else None
    return Expectation(
        kind=str(plan.kind), input_mint=spend.mint, output_mint=request.output_mint,
        amount=spend.amount or None, receiver=request.receiver,
        slippage_bps=request.slippage_bps, referral_fee_bps=referral,
        fee_bps=_int(ordered.get("fee_bps")), **_price(ordered),
    )  # fmt: skip


def _recurring(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, RecurringRequest)
    time = request.params.time
    terms = None
    if time is not None:
        bounds = sum(p is not None for p in (time.min_price, time.max_price))
        terms = RecurringTerms(
            in_amount=time.in_amount, per_cycle=time.in_amount // time.number_of_orders,
            cycle_seconds=time.interval, price_bounds=bounds, start_at=time.start_at,
        )  # fmt: skip
    price = _price(ordered)
    price.pop("reference_out", None)  # a price over days to come: only the plan's limit holds
    return Expectation(
        kind=str(plan.kind), input_mint=spend.mint, output_mint=request.output_mint,
        amount=spend.amount or None, recurring=terms, **price,
    )  # fmt: skip


def _trigger_cancel(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    request = plan.request
    assert isinstance(request, TriggerCancelRequest)
    return Expectation(kind=str(plan.kind), order=request.order)


def _trigger_v2(plan: PlanRecord, spend: Spend, ordered: Mapping[str, Any]) -> Expectation:
    return v2.expectation(plan, spend.mint, spend.amount, ordered)


Builder = Callable[[PlanRecord, Spend, Mapping[str, Any]], Expectation]
BUILDERS: dict[PlanKind, Builder] = {
    PlanKind.SWAP: _swap,
    PlanKind.RECURRING: _recurring,
    PlanKind.TRIGGER_CANCEL: _trigger_cancel,
    PlanKind.TRIGGER_V2_DCA: _trigger_v2,
    PlanKind.TRIGGER_V2_ORDER: _trigger_v2,
    PlanKind.TRIGGER_V2_CANCEL: _trigger_v2,
}


def expectation(plan: PlanRecord, ordered: Mapping[str, Any]) -> Expectation:
    """What the plan asked for, as txguard holds the transaction to it."""
    return BUILDERS[plan.kind](plan, spend_of(plan), ordered)


# what an order answer calls a fact (the API's names) -> the run's ``ordered`` event's name
_ANSWER_NAMES = {
    "feeBps": "fee_bps",
    "slippageBps": "slippage_bps",
    "outAmount": "out_amount",
    "swapType": "swap_type",
    "inputMint": "input_mint",
    "outputMint": "output_mint",
}


def ordered_facts(given: Mapping[str, Any]) -> dict[str, Any]:
    """What an order call answered besides the transaction, as the runner records it
    (its ``ordered`` event): from that event's detail as `jupcron audit` shows it, or
    from the API's own answer (``feeBps``, ``gasless``, Trigger V2's ``vault`` ...)."""
    return {_ANSWER_NAMES.get(key, key): value for key, value in given.items()}


def mint_programs(rpc: Chain | None, expect: Expectation) -> dict[str, str] | None:
    """The plan's mints' token programs, from the chain when `rpc.url` is set
    (cached there); None without one, or when it cannot answer now: the guard
    is then stricter, never looser."""
    if rpc is None or not expect.mints:
        return None
    try:
        owners = rpc.owners(expect.mints)
    except (RetryableError, RejectedError) as exc:
        log.warning("mint_programs_unknown", error=str(exc))
        return None
    return {mint: owner for mint, owner in owners.items() if owner is not None}


def _guard_inputs(
    plan: PlanRecord, ordered: Mapping[str, Any], gasless: bool, rpc: Chain | None, simulate: bool
) -> dict[str, Any]:
    """What txguard is told of a run of `plan`: the plan's terms, and the chain's facts."""
    expect = expectation(plan, ordered)
    return {
        "gasless": bool(gasless and plan.kind is PlanKind.SWAP),
        "expect": expect,
        "mint_programs": mint_programs(rpc, expect),
        "simulator": rpc if simulate else None,
    }


def judge(
    tx_b64: str,
    plan: PlanRecord,
    wallet: Pubkey,
    policy: GuardPolicy,
    *,
    ordered: Mapping[str, Any],
    gasless: bool = False,
    rpc: Chain | None = None,
    simulate: bool = False,
) -> Verdict:
    """txguard's verdict on `tx_b64` as a run of `plan` (for `wallet`, under
    `policy`): held to the plan's whole terms; with `rpc`, the mints' programs
    come from the chain and, when `simulate`, the transaction is simulated."""
    return inspect(tx_b64, wallet, policy, **_guard_inputs(plan, ordered, gasless, rpc, simulate))


def check(
    tx_b64: str,
    plan: PlanRecord,
    wallet: Pubkey,
    policy: GuardPolicy,
    *,
    ordered: Mapping[str, Any],
    gasless: bool = False,
    rpc: Chain | None = None,
    simulate: bool = False,
) -> Verdict:
    """`judge`'s verdict, raising `GuardRejectedError` (with the reasons) on a refusal:
    the runner's sign step calls this, so it judges exactly as `judge` does."""
    inputs = _guard_inputs(plan, ordered, gasless, rpc, simulate)
    return guard.check(tx_b64, wallet, policy, **inputs)


__all__ = [
    "BUILDERS",
    "check",
    "expectation",
    "judge",
    "mint_programs",
    "ordered_facts",
    "output_mint_of",
]
