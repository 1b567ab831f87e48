"""Settling a run whose execute call gave no clear answer.

The signed bytes may or may not have landed. The RPC node (if configured)
is asked by the transaction's id (`jupcron.chain.txid`: our signature when our
wallet pays the fee; else the transaction of our wallet that carries our
signature, as in a JupiterZ fill); a transaction it has seen settles the run
either way, under the id that landed; one it has not seen settles it as failed
only once the blockhash has surely expired (then it can never land), and only
when that "not seen" covers the whole time since the run was claimed. Without
an answer, the run stays `submitted` for the next recovery pass, and becomes
`in_doubt` once the blockhash has surely expired: never a fresh transaction for
a slot whose first might have landed.

"Still submitted" is read back from the store, and it must be this driver's run as
it left it (submitted, same order): a driver that heard nothing for a while may
find the run settled, or re-ordered, by another (the wallet's new leader, after
this daemon lost its lease in a freeze or a partition). That run is theirs:
`RunTakenOver` ends this drive, which then neither reports their outcome as its
own nor drives on from the state they left.

A swap settled as landed this way has no execute answer to say what it gave and got:
its transaction on the chain does (`jupcron.runner.chainfill`), read once and kept once
the run is settled. Measuring never holds up the settlement.
"""

from __future__ import annotations

from datetime import datetime

from jupcron.chain import txid
from jupcron.domain import RunStatus
from jupcron.errors import RetryableError
from jupcron.runner.book import RunTakenOver, api_detail, order_of
from jupcron.runner.chainfill import UNMEASURED_STEP, ChainFill, measure_swap
from jupcron.runner.ports import Ports
from jupcron.runner.timing import surely_expired
from jupcron.store.records import RunRecord

IN_DOUBT_ERROR = (
    "execute gave no answer and the outcome could not be settled before "
    "the blockhash expired; check the signature on-chain"
)


def settle_unanswered(ports: Ports, run: RunRecord, now: datetime) -> RunRecord:
    """Settle `run` (submitted, no clear answer) from the chain if it can be; `now` is
    when the unanswered call ended (the RPC call, if any, moves it on)."""
    status = None
    if ports.rpc is not None and run.signature:
        status = ask_chain(ports, run)
        now = ports.clock()
    return settle_from(ports, run, status, now)


def ask_chain(ports: Ports, run: RunRecord) -> txid.Outcome | None:
    """What the RPC node says of the run's signed transaction, asked by its id (an
    ``rpc_status`` event); None when it did not answer (``rpc_unanswered``), or there
    is no node to ask."""
    if ports.rpc is None or not run.signature:
        return None
    try:
        status = txid.outcome(ports.rpc, run.signed_tx, run.signature, run.created_at)
    except RetryableError as exc:
        ports.book.event(run.id, "rpc_unanswered", api_detail(exc))
        return None
    expired = surely_expired(run, ports.clock(), ports.config.runner.blockhash_validity)
    # a search that could not cover the run's time is not the node's "not found" (an
    # ``rpc_status`` not found after the expiry is what `jupcron settle` holds against
    # a verdict that it landed): it is booked under its own name
    step = "rpc_status" if status.found or status.complete else "rpc_search_incomplete"
    ports.book.event(run.id, step, {**status.detail(), "expired": expired})
    return status


def settle_from(
    ports: Ports, run: RunRecord, status: txid.Outcome | None, now: datetime
) -> RunRecord:
    """Settle `run` on the chain's word `status` (None: no word): a transaction it holds
    settles it under that transaction's id; "never landed" needs the whole word and an
    expired blockhash; else it stays `submitted`, or is `in_doubt` once expired."""
    book = ports.book
    validity = ports.config.runner.blockhash_validity
    if status is not None:
        if status.landed_ok:
            fill = chain_fill(ports, run, status.txid or run.signature)
            settled = book.finish(run, RunStatus.SUCCEEDED, step="settled_by_rpc",
                                  slot=status.slot, signature=status.txid,
                                  **({**fill.columns(run), "detail": fill.detail()}
                                     if fill else {}))  # fmt: skip
            if fill is not None:
                keep_chain_fill(ports, settled, fill)
            return settled
        if status.found:
            return book.finish(run, RunStatus.FAILED, step="settled_by_rpc",
                               signature=status.txid,
                               error=f"landed with error: {status.err}")  # fmt: skip
        if status.complete and surely_expired(run, ports.clock(), validity):
            return book.finish(
                run, RunStatus.FAILED, step="settled_by_rpc",
                error="blockhash expired and the signature never landed",
            )  # fmt: skip
    if surely_expired(run, now, validity):
        return book.finish(run, RunStatus.IN_DOUBT, step="in_doubt", error=IN_DOUBT_ERROR)
    current = book.load(run.id)  # still submitted: recovery tries again
    if current.status is not RunStatus.SUBMITTED or order_of(current) != order_of(run):
        raise RunTakenOver(current)  # another driver moved it meanwhile: theirs
    return current


def chain_fill(ports: Ports, run: RunRecord, landed_id: str | None) -> ChainFill | None:
    """A landed swap's amounts from its transaction on the chain (id `landed_id`);
    None (a ``chain_fill_unmeasured`` event says why) when they cannot be told, or the
    run is not a swap (only a swap's fills are its execute answers)."""
    if ports.rpc is None:
        return None
    found = measure_swap(ports.store, ports.rpc, run, landed_id)
    if isinstance(found, str):
        ports.book.event(run.id, UNMEASURED_STEP, {"txid": landed_id, "reason": found})
        return None
    return found


def keep_chain_fill(ports: Ports, run: RunRecord, fill: ChainFill) -> None:
    """Store the fill as the run's result once the run is settled, not with it: a
    driver that lost the run meanwhile must not write over the answer its new driver
    stored for the same signature (the store keeps one result per run and signature,
    a newer one replacing the older). A crash or a store outage before it leaves the
    swap "landed, amounts unknown": never a wrong figure."""
    ports.book.keep_result(run.id, fill.result(run, ports.clock()))
    ports.book.flush(run.id)  # its settlement's event names it (``fill: chain``)
