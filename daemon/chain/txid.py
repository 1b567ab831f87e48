"""What the chain says of a signed transaction, asked by its id, which is not always our
signature.

A Solana transaction's id is its FIRST signature, the fee payer's, and the RPC node
finds transactions by it only: ``getSignatureStatuses`` and ``getTransaction`` take
"a txid, the first signature of a transaction" (the RPC docs); agave keys its
transaction-status index by ``signatures[0]``. When our wallet pays the fee (an
aggregator route, every order product) our signature is the id: one
``getSignatureStatuses`` call answers. In a JupiterZ (RFQ) fill the market maker pays
the fee and signs first (its key is account 0; ours a later signer): asking the node
for our signature finds nothing, whether the fill landed or not.

Such a transaction is found from our side: our wallet signs it, so its id is among
the wallet's transactions (``getSignaturesForAddress``, newest first). Each id since
the run was claimed is read (``getTransaction``) and its signatures compared with
ours. The search is bounded (pages, transactions read). Only a search that reached
a transaction of the wallet older than the run's claim says "not there": one that
stopped before (a bound, or a listing that ends there: a node keeping a short
history lists no further; a funded wallet always has an older transaction, the
one that funded it), or met an id the node would not read, cannot
(`Outcome.complete` is False), and a caller must not settle on its silence.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from solders.transaction import VersionedTransaction

from jupcron.chain.rpc import LandedTransaction, SolanaRpc

PAGE = 1000  # getSignaturesForAddress' documented largest page
MAX_PAGES = 3
MAX_READS = 100  # getTransaction calls one search may make
# a block's time is the validators' estimate: look this much before the claim too
BLOCK_TIME_SLACK = 300.0


@dataclass(frozen=True)
class Outcome:
    """The chain's answer for one signed transaction: ``found`` (landed, with ``err``
    None when it succeeded) under the id ``txid``; ``complete``: whether "not found"
    is the node's word (False: the search could not cover the run's time)."""

    found: bool
    complete: bool = True
    err: Any = None
    slot: int | None = None
    txid: str | None = None
    searched: int | None = None  # transactions read by a search; None: asked by its id

    @property
    def landed_ok(self) -> bool:
        return self.found and self.err is None

    def detail(self) -> dict[str, Any]:
        """For the run's ``rpc_status`` event."""
        seen: dict[str, Any] = {"found": self.found, "err": str(self.err), "txid": self.txid}
        if self.searched is not None:
            seen.update(searched=self.searched, complete=self.complete)
        return seen


def signer_of(signed_tx: str | None, ours: str) -> str | None:
    """The key our signature stands for in `signed_tx` when it is NOT the transaction's
    id (another party pays the fee and signs first); None when it is the id, or when
    the bytes cannot tell (then the id is taken to be ours, as it always was)."""
    if signed_tx is None:
        return None
    try:
        tx = VersionedTransaction.from_bytes(base64.b64decode(signed_tx, validate=True))
    except (binascii.Error, ValueError):
        return None
    signatures = [str(s) for s in tx.signatures]
    if not signatures or signatures[0] == ours or ours not in signatures:
        return None
    return str(tx.message.account_keys[signatures.index(ours)])


def outcome(rpc: SolanaRpc, signed_tx: str | None, ours: str, since: datetime) -> Outcome:
    """What the chain says of the transaction carrying our signature `ours` (signed
    bytes `signed_tx`, ordered after `since`). RPC errors propagate (RetryableError)."""
    signer = signer_of(signed_tx, ours)
    if signer is None:  # our signature is the id: the cheap path
        status = rpc.signature_status(ours)
        return Outcome(status.found, err=status.err, slot=status.slot,
                       txid=ours if status.found else None)  # fmt: skip
    return search(rpc, signer, ours, since)


def search(rpc: SolanaRpc, signer: str, ours: str, since: datetime) -> Outcome:
    """Find the transaction carrying `ours` among `signer`'s since `since`, bounded."""
    floor = since.timestamp() - BLOCK_TIME_SLACK
    before: str | None = None
    reads, complete = 0, True
    for _ in range(MAX_PAGES):
        page = rpc.signatures_for_address(signer, before=before, limit=PAGE)
        for entry in page:
            if entry.block_time is not None and entry.block_time < floor:
                return Outcome(False, complete=complete, searched=reads)
            if reads >= MAX_READS:
                return Outcome(False, complete=False, searched=reads)
            reads += 1
            landed = rpc.transaction(entry.signature)
            if landed is None:
                complete = False  # listed, yet not readable: it may be ours
            elif ours in landed.signatures:
                return _found(landed, reads)
        if len(page) < PAGE:  # the node lists nothing older: it may not keep it
            return Outcome(False, complete=False, searched=reads)
        before = page[-1].signature
    return Outcome(False, complete=False, searched=reads)


def _found(landed: LandedTransaction, reads: int) -> Outcome:
    return Outcome(True, err=landed.err, slot=landed.slot, txid=landed.id, searched=reads)
