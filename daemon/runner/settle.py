"""Settling a run whose execute call gave no clear answer.

The signed bytes may or may not have landed. The RPC node (if configured)
is asked; a signature it has seen settles the run either way; one it has not
seen settles it as failed only once the blockhash has surely expired (then
it can never land). Without an answer, the run stays `submitted` for the
next recovery pass, and becomes `in_doubt` once the blockhash has surely
expired: never a fresh transaction for a slot whose first might have landed.
"""

from __future__ import annotations

from datetime import datetime

from jupcron.errors import RetryableError
from jupcron.runner.book import api_detail
from jupcron.runner.ports import Ports
from jupcron.runner.timing import surely_expired
from jupcron.store.records import RunRecord
from jupcron.store.types import RunStatus

IN_DOUBT_ERROR = (
    "execute gave no answer and the outcome could not be settled before "
    "the blockhash expired; check the signature on-chain"
)


def settle_unanswered(ports: Ports, run: RunRecord, now: datetime) -> RunRecord:
    """Settle `run` (submitted, no clear answer) from the chain if it can be; `now` is
    when the unanswered call ended (the RPC call, if any, moves it on)."""
    book, rpc = ports.book, ports.rpc
    validity = ports.config.runner.blockhash_validity
    if rpc is not None and run.signature:
        try:
            status = rpc.signature_status(run.signature)
        except RetryableError as exc:
            book.event(run.id, "rpc_unanswered", api_detail(exc))
        else:
            expired = surely_expired(run, ports.clock(), validity)
            found = {"found": status.found, "err": str(status.err), "expired": expired}
            book.event(run.id, "rpc_status", found)
            if status.landed_ok:
                return book.finish(run, RunStatus.SUCCEEDED, step="settled_by_rpc",
                                   slot=status.slot)  # fmt: skip
            if status.found:
                return book.finish(run, RunStatus.FAILED, step="settled_by_rpc",
                                   error=f"landed with error: {status.err}")  # fmt: skip
            if expired:
                return book.finish(
                    run, RunStatus.FAILED, step="settled_by_rpc",
                    error="blockhash expired and the signature never landed",
                )  # fmt: skip
        now = ports.clock()
    if surely_expired(run, now, validity):
        return book.finish(run, RunStatus.IN_DOUBT, step="in_doubt", error=IN_DOUBT_ERROR)
    return book.load(run.id)  # still submitted: recovery tries again
