"""runs.owner for the signed runs 0014 could not tell, or told wrong: the key of the
signature the run's own ``signed`` event recorded, not of ``runs.signature``.

0014 took ``runs.signature`` for our signature. It is not, once a run another party
paid for has settled: the runner then records the transaction's id there (the execute
answer's ``signature``, or the chain's txid), and the id is the fee payer's signature,
slot 0: a JupiterZ (RFQ) maker's. In the bytes we signed that slot is still the
order's placeholder, so 0014 found no key and left the run NULL, counted under its
wallet's name only: 5 USDC of RFQ fill signed as `default` before 0013, `db upgrade`,
the same keypair renamed `main`, and 5 more were signed under a 7 USDC/day cap. Had
the maker's signature been in those bytes, 0014 would have written the MAKER's key:
a run counted against no budget of ours at all.

What we signed is in the run's events: each ``signed`` event holds the signature
our wallet put in its slot (written before anything was posted, never pruned). The
one among the stored transaction's signatures names our slot, and the message's key
at that slot is the run's keypair. It is written where the owner is NULL, or is
another signer's key of that same transaction (only 0014 ever wrote such a key: a
claim records our wallet's address). Any other owner is left as it is. No schema
change; a downgrade leaves the owners written (they are true).

Revision ID: 0015_run_owner_by_signing
Revises: 0014_run_owner_fill
Create Date: 2026-11-28 13:00:00
"""

from __future__ import annotations

import base64
import binascii
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0015_run_owner_by_signing"
down_revision = "0014_run_owner_fill"
branch_labels = None
depends_on = None

PAGE = 1000  # runs read (and their transactions decoded) at a time
SIGNED = "signed"  # the step the runner records with our signature, before posting

_RUNS = sa.table(
    "runs",
    sa.column("id", sa.Integer), sa.column("owner", sa.String),
    sa.column("signed_tx", sa.Text),
)  # fmt: skip
_EVENTS = sa.table(
    "run_events",
    sa.column("run_id", sa.Integer), sa.column("step", sa.String),
    sa.column("detail", sa.JSON),
)  # fmt: skip
_SIGNED_RUNS = (
    sa.select(_RUNS.c.id, _RUNS.c.owner, _RUNS.c.signed_tx)
    .where(_RUNS.c.signed_tx.is_not(None), _RUNS.c.id > sa.bindparam("after"))
    .order_by(_RUNS.c.id)
    .limit(PAGE)
)
_SIGNED_EVENTS = sa.select(_EVENTS.c.run_id, _EVENTS.c.detail).where(
    _EVENTS.c.step == SIGNED, _EVENTS.c.run_id.in_(sa.bindparam("ids", expanding=True))
)
_FILL = (
    _RUNS.update()
    .where(_RUNS.c.id.in_(sa.bindparam("ids", expanding=True)))
    .values(owner=sa.bindparam("key"))
)


def upgrade() -> None:
    _fill_owners(op.get_bind())


def downgrade() -> None:
    pass  # the owners written are true at 0014 too


def _fill_owners(conn: sa.Connection) -> None:
    """Each signed run's keypair, by the signature its own event recorded (a page at a
    time)."""
    after = 0
    while True:
        page = conn.execute(_SIGNED_RUNS, {"after": after}).all()
        if not page:
            return
        ours: defaultdict[int, set[str]] = defaultdict(set)
        for run_id, detail in conn.execute(_SIGNED_EVENTS, {"ids": [r[0] for r in page]}):
            signature = detail.get("signature") if isinstance(detail, dict) else None
            if isinstance(signature, str):
                ours[run_id].add(signature)
        by_key: defaultdict[str, list[int]] = defaultdict(list)
        for run_id, owner, signed_tx in page:
            key = _owner(signed_tx, ours.get(run_id, set()), owner)
            if key is not None:
                by_key[key].append(run_id)
        for key, ids in by_key.items():
            conn.execute(_FILL, {"ids": ids, "key": key})
        after = page[-1][0]


def _owner(signed_tx: str, ours: set[str], owner: str | None) -> str | None:
    """The owner to write for a run (None: leave it): the key of the one slot whose
    signature is among `ours`, where `owner` is NULL or another signer's key."""
    signers = _signers(signed_tx)
    if signers is None:
        return None
    slots = {i for i, (signature, _key) in enumerate(signers) if signature in ours}
    if len(slots) != 1:
        return None  # nothing of ours in these bytes, or not one slot: cannot tell
    key = signers[slots.pop()][1]
    others = {k for _s, k in signers} - {key}
    return key if owner is None or owner in others else None


_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _signers(tx_b64: str) -> list[tuple[str, str]] | None:
    """Each signer slot of the signed transaction `tx_b64`: its signature and its key
    (base58); None when the bytes do not read as one. Read from Solana's wire format
    (the standard library only: a migration is history, and imports nothing that may
    change under it): the signatures, then the message (a version byte first if it is
    versioned), whose header's first count is its signers, its keys' first ones."""
    try:
        raw = base64.b64decode(tx_b64, validate=True)
        count, at = _short_vec(raw, 0)
        signatures = [raw[at + 64 * i : at + 64 * (i + 1)] for i in range(count)]
        at += 64 * count
        if raw[at] & 0x80:
            at += 1
        required = raw[at]
        keys, at = _short_vec(raw, at + 3)
        if count != required or keys < required or len(raw) < at + 32 * keys:
            return None
        return [
            (_base58(signatures[i]), _base58(raw[at + 32 * i : at + 32 * (i + 1)]))
            for i in range(required)
        ]
    except (binascii.Error, ValueError, IndexError, TypeError):
        return None


def _short_vec(raw: bytes, at: int) -> tuple[int, int]:
    """A compact-u16 length at `at`: its value and the offset after it."""
    value = 0
    for shift in (0, 7, 14):
        byte = raw[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
    raise ValueError("a compact-u16 longer than three bytes")


def _base58(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    text = ""
    while number:
        number, digit = divmod(number, 58)
        text = _ALPHABET[digit] + text
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + text
