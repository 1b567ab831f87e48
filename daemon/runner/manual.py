"""The operator's own moves on runs: a verdict on an ``in_doubt`` run, and a
`jupcron fire` interrupted (Ctrl-C).

The daemon never decides an ``in_doubt`` run by itself: a person looks the
signature up on-chain and records what they found. The run moves (a
compare-and-set from ``in_doubt`` only) to ``succeeded`` or ``failed``, with an
event saying who decided, why, and what the RPC node said if one is set up. If
the RPC node contradicts the verdict, nothing changes unless forced. A swap the
node finds landed, as the verdict says, gets its amounts from its transaction there
(`jupcron.runner.chainfill`), kept with the verdict.

An interrupted fire withdraws its run if nothing was signed yet (a compare-and-set
to ``skipped``): else the next recovery would order it, if it came within the plan's
grace, after the operator had given up on it. A signed run stays in flight: its
transaction may land, and only recovery (the same signed bytes, or the RPC node)
settles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jupcron.chain import txid
from jupcron.chain.rpc import SolanaRpc
from jupcron.domain import RunStatus
from jupcron.errors import ConfigError, RetryableError
from jupcron.runner.book import order_of
from jupcron.runner.chainfill import UNMEASURED_STEP, ChainFill, measure_swap
from jupcron.store.port import RunStore
from jupcron.store.records import RunRecord

SETTLED_CODE = "settled_by_operator"
INTERRUPTED_STEP = "interrupted"
UNSIGNED = (RunStatus.PENDING, RunStatus.REQUESTED)


@dataclass(frozen=True)
class Verdict:
    landed: bool  # True: landed without error; False: never landed, or failed on-chain
    reason: str
    by: str


def settle_in_doubt(
    store: RunStore,
    run_id: int,
    verdict: Verdict,
    *,
    now: datetime,
    rpc: SolanaRpc | None = None,
    force: bool = False,
    seen: str | None = None,
) -> RunRecord:
    """Record the operator's verdict on run `run_id`; the run as it now is. `seen`: what
    the store shows of the run's transaction having landed (`store.follow.landed_evidence`):
    a verdict that it did not land is refused unless forced, as the RPC node's is."""
    if not verdict.reason.strip():
        raise ConfigError("say why (--reason): it goes into the audit trail")
    try:
        run = store.load(run_id)
    except LookupError:
        raise ConfigError(f"no run {run_id} in the store") from None
    if run.status is not RunStatus.IN_DOUBT:
        raise ConfigError(f"run {run_id} is {run.status}, not in_doubt: there is nothing to settle")
    chain = _ask_chain(rpc, run)
    on_chain = chain.get("rpc_landed")
    if not force and on_chain is not None and on_chain != verdict.landed:
        said = "landed" if on_chain else "landed with an error"
        raise ConfigError(
            f"the RPC node says signature {run.signature} {said}; nothing changed "
            "(check again, or --force to record your verdict anyway)"
        )
    if not force and not verdict.landed and seen is not None:
        raise ConfigError(
            f"{seen}: it landed; nothing changed (--force records your verdict anyway)"
        )
    if not force and verdict.landed and on_chain is None:
        not_found = _not_found(store, run, chain)
        if not_found is not None:
            raise ConfigError(
                f"{not_found}, so it cannot have landed unless that node missed it; "
                "nothing changed (if an explorer shows it landed, --force records your "
                "verdict anyway)"
            )
    detail: dict[str, Any] = {"by": verdict.by, "reason": verdict.reason, "landed": verdict.landed}
    detail.update(chain)
    if seen is not None:
        detail["store"] = seen
    if force:
        detail["forced"] = True
    fields: dict[str, Any]
    if verdict.landed:
        status, fields = RunStatus.SUCCEEDED, {"error": None, "error_code": None}
    else:
        note = f"settled by {verdict.by}: {verdict.reason}"
        status, fields = RunStatus.FAILED, {"error": note, "error_code": SETTLED_CODE}
    if on_chain is not None and on_chain == verdict.landed and chain.get("rpc_slot") is not None:
        # the node found it where the verdict says: it landed (with or without an error), so
        # the network took its fee; the slot says so to the report, as an answer's would
        fields["slot"] = chain["rpc_slot"]
    results = []
    if verdict.landed and on_chain and rpc is not None:
        fill = measure_swap(store, rpc, run, chain.get("rpc_txid"))
        if isinstance(fill, ChainFill):
            fields.update(fill.columns(run))
            detail.update(fill.detail())
            results.append(fill.result(run, now))
        elif fill is not None:
            detail[UNMEASURED_STEP] = fill
    settled, moved = store.advance(
        run, status, now=now, expect=[RunStatus.IN_DOUBT], step=SETTLED_CODE, detail=detail,
        fields=fields, results=results,
    )  # fmt: skip
    if not moved:
        raise ConfigError(f"run {run_id} changed while it was being settled; nothing recorded")
    return settled


def _not_found(store: RunStore, run: RunRecord, chain: dict[str, Any]) -> str | None:
    """Why the RPC node's word is that `run`'s signature never landed, or None: its
    answer now (an in_doubt run's blockhash has expired), or the run's own
    ``rpc_status`` events recorded after the expiry."""
    if chain.get("rpc") == "not found":
        return f"the RPC node does not know signature {run.signature} (searched its history)"
    recorded = [d for step, d in store.steps(run.id) if step == "rpc_status"]
    if any(d.get("found") for d in recorded):
        return None
    if any(d.get("expired") for d in recorded):  # a not-found before expiry proves nothing
        return (
            f"the run's events record that the RPC node did not find signature "
            f"{run.signature} after its blockhash had expired"
        )
    return None


def _ask_chain(rpc: SolanaRpc | None, run: RunRecord) -> dict[str, Any]:
    """What the RPC node says of the run's signed transaction, asked by its id (a
    JupiterZ fill's is the maker's signature: `jupcron.chain.txid`), for the event
    (empty without a node)."""
    if rpc is None or not run.signature:
        return {}
    try:
        status = txid.outcome(rpc, run.signed_tx, run.signature, run.created_at)
    except RetryableError as exc:
        return {"rpc": f"unanswered: {exc}"}
    if not status.found:
        # a search that could not cover the run's time says nothing; a "not found"
        # proves nothing by itself either (history may be pruned): no contradiction
        return {"rpc": "not found" if status.complete else "search incomplete"}
    return {
        "rpc": "landed" if status.landed_ok else f"failed on-chain: {status.err}",
        "rpc_landed": status.landed_ok,
        "rpc_slot": status.slot,
        "rpc_txid": status.txid,
    }


def withdraw_interrupted(
    store: RunStore, plan_id: int, slot: datetime, *, now: datetime, by: str
) -> RunRecord | None:
    """The run an interrupted `jupcron fire` claimed for (`plan_id`, `slot`), as it now
    is: recorded as ``skipped`` if nothing of it was signed, else left as it was;
    ``None`` if no run of that slot is in flight (never claimed, or already ended)."""
    ours = (
        run for run, _ in store.in_flight() if (run.plan_id, run.scheduled_for) == (plan_id, slot)
    )
    run = next(ours, None)
    if run is None:
        return None
    if run.status not in UNSIGNED:
        return run  # signed: it may land; recovery settles it
    reason = f"interrupted by {by} before anything was signed"
    withdrawn, _ = store.advance(
        run, RunStatus.SKIPPED, now=now, expect=[run.status], step=INTERRUPTED_STEP,
        detail={"by": by, "reason": reason}, fields={"error": reason},
        match=order_of(run),
    )  # fmt: skip
    return withdrawn
