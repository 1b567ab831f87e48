"""How a run's transaction is judged before anything is signed.

One function, `judge`, used by the runner's sign step (through `check`) and by
`jupcron tx inspect --plan`, so an operator's question "would the daemon sign
this for that plan, and why not?" gets exactly the runner's answer.

The plan's terms become one typed `Expectation`, built by the plan kind's product
(`jupcron.products`, its ``expectation``), from the plan and what its order call answered
(``ordered``: the facts of the run's ``ordered`` event — a swap's declared fee,
Trigger V2's vault and deposit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, Protocol

import structlog
from solders.pubkey import Pubkey

from jupcron.errors import RejectedError, RetryableError
from jupcron.products.registry import product
from jupcron.runner.preflight import spend_of
from jupcron.store.records import PlanRecord
from jupcron.txguard import GuardPolicy, Verdict, guard, inspect
from jupcron.txguard.expect import Expectation
from jupcron.txguard.simulate import Simulator

log = structlog.get_logger(__name__)
P = ParamSpec("P")


class Chain(Simulator, Protocol):
    """The RPC node, as the guard uses it: mint programs, and simulation."""

    def owners(self, addresses: Any) -> dict[str, str | None]: ...


def expectation(plan: PlanRecord, ordered: Mapping[str, Any]) -> Expectation:
    """What the plan asked for, as txguard holds the transaction to it."""
    return product(plan.kind).expectation(plan, spend_of(plan), ordered)


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
        "gasless": bool(gasless and product(plan.kind).gasless),
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


def _raising(judged: Callable[P, Verdict]) -> Callable[P, Verdict]:
    def checked(*args: P.args, **kwargs: P.kwargs) -> Verdict:
        return guard.held(judged(*args, **kwargs))

    return checked


check = _raising(judge)
"""`judge`'s verdict, raising `GuardRejectedError` (with the reasons) on a refusal:
the runner's sign step calls this, so it judges exactly as `judge` does."""
