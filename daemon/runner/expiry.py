"""Whether a swap's signed transaction can still land, decided before its first post.

A Swap V2 order carries ``lastValidBlockHeight``, the hard expiry of its
transaction: once the chain's block height is past it, the transaction can
never be processed. A run found ``signed`` was never posted (``submitted`` is
stored before the post), so when its order's height has passed, nothing of it
can land: posting it is pointless and a fresh order (inside the slot's grace)
cannot make two land.

The block height comes from ``rpc.url`` (``getBlockHeight`` at ``finalized``:
when even the finalized height is past it, every block the transaction could
have been in is final). Without an RPC node, when it cannot answer now, or for
an order without a height (an RFQ route sends ``expireAt`` instead), the
documented fallback is time: ``runner.blockhash_validity`` seconds after the
order plus a third of that as a margin (`surely_expired`), later than any real
expiry (150 blocks, about 60-90 s after the blockhash was taken).

Ultra v1 orders carry no height: their runs keep the path they always had
(post the bytes, and read the answer). An RFQ (JupiterZ) quote of either API
carries ``expireAt``: the order engine takes its fill only while the chain's clock
is not past the fill's ``expire_at`` (jup-ag/rfq-webhook-toolkit, programs/
order-engine, fill.rs), so never-posted bytes past it are not posted (the answer
would be -2003, which cannot tell a late maker's fill from none) but ordered afresh.

After an execute answer saying the transaction may still land (-1000/-2000), a fresh
order waits for `surely_gone`: the same rule, by the chain's height when it is
known, else by the validity and its margin (never the bare validity, the expected
expiry only: a transaction may still land in the block at its last valid height).
"""

from __future__ import annotations

from datetime import UTC, datetime

import structlog

from jupcron.domain import RunStatus
from jupcron.errors import RejectedError, RetryableError
from jupcron.products.base import SWAP_V2, SwapTerms
from jupcron.products.facts import fact_int
from jupcron.runner.book import api_detail
from jupcron.runner.ports import Ports
from jupcron.runner.timing import surely_expired, within_grace
from jupcron.store.records import PlanRecord, RunRecord

log = structlog.get_logger(__name__)


def cannot_land(ports: Ports, run: RunRecord, swap: SwapTerms, now: datetime) -> str | None:
    """Why `run`'s signed, never posted transaction surely cannot land any more (or
    posting it is pointless: an RFQ quote past its ``expireAt``); None when it may still
    land (or it is an Ultra v1 order of no RFQ quote)."""
    quote_expiry = fact_int(ports.book.ordered(run.id).get("expire_at"))
    if quote_expiry is not None and now.timestamp() > quote_expiry:
        # the order engine takes the fill only while the chain's clock is not past its
        # expire_at (fill.rs); nothing of these bytes was sent, so a fresh order in
        # their stead cannot make two land even if the chain's clock lags ours
        at = datetime.fromtimestamp(quote_expiry, UTC).isoformat()
        return f"the RFQ quote expired at {at} (expireAt): its fill is taken only until then"
    if swap.api != SWAP_V2:
        return None
    return surely_gone(ports, run, swap, now)


def surely_gone(ports: Ports, run: RunRecord, swap: SwapTerms | None, now: datetime) -> str | None:
    """Why `run`'s signed transaction surely cannot land any more, whatever its API;
    None when it may still land. The rule every path holds to: the chain's block height
    past a Swap V2 order's ``lastValidBlockHeight`` when it is known and the RPC node
    answers; otherwise ``runner.blockhash_validity`` and its margin (`surely_expired`)."""
    limit = _height_limit(ports, swap)
    if ports.rpc is not None and limit is not None:
        try:
            height = ports.rpc.block_height()
        except (RetryableError, RejectedError) as exc:
            ports.book.event(run.id, "block_height_unknown", api_detail(exc))
        else:
            ports.book.event(
                run.id, "block_height", {"height": height, "last_valid_block_height": limit}
            )
            if height > limit:
                return f"block height {height} is past the order's lastValidBlockHeight {limit}"
            return None
    validity = ports.config.runner.blockhash_validity
    if surely_expired(run, now, validity):
        return (
            f"more than {validity * 4 / 3:g} s since the order (runner.blockhash_validity "
            "and its margin): its blockhash has surely expired"
        )
    return None


def heights_known(ports: Ports, swap: SwapTerms | None) -> bool:
    """Whether `surely_gone` asks the chain's block height (else it goes by the time)."""
    return _height_limit(ports, swap) is not None


def _height_limit(ports: Ports, swap: SwapTerms | None) -> int | None:
    """A Swap V2 order's ``lastValidBlockHeight``, when an RPC node can be asked past it."""
    if ports.rpc is None or swap is None or swap.api != SWAP_V2:
        return None
    return swap.last_valid_block_height


def expired_unposted(
    ports: Ports, run: RunRecord, plan: PlanRecord, reason: str, now: datetime
) -> RunRecord:
    """A signed run whose transaction expired before it was ever posted: order afresh
    inside the slot's grace (nothing can land twice), else record it as failed."""
    log.info("run_expired_unposted", reason=reason)
    if within_grace(run, plan, now):
        return ports.book.advance(
            run, RunStatus.PENDING, expect=[RunStatus.SIGNED], step="reorder",
            detail={"reason": "expired before it was posted, fresh order", "expired": reason},
        )  # fmt: skip
    return ports.book.finish(
        run, RunStatus.FAILED, step="expired_unposted",
        error=f"expired before it was posted, nothing was sent: {reason}",
    )  # fmt: skip
